//! What the tests share.

pub(crate) mod ag;
pub(crate) mod many_tools;
pub(crate) mod openai;
pub(crate) mod replies;

/// One test per client, scenario and mode: each scenario is a function of
/// the calling module, generic over a client's mock and given whether to
/// stream. `per_client!([a, b] chat: Mock, c; gemini: Mock;)` gives
/// `chat::a::plain`, `chat::a::streamed`, the same for `b` and, for `chat`
/// only, `c`.
macro_rules! per_client {
    ($scenarios:tt $($client:ident: $mock:ty $(, $more:ident)*;)*) => {$(
        mod $client {
            $crate::support::per_client!(@each $mock: $scenarios [$($more),*]);
        }
    )*};
    (@each $mock:ty: [$($scenario:ident),* $(,)?] [$($more:ident),*]) => {
        $crate::support::per_client!(@modes $mock: $($scenario,)* $($more,)*);
    };
    (@modes $mock:ty: $($scenario:ident,)*) => {$(
        mod $scenario {
            #[tokio::test]
            async fn plain() {
                super::super::$scenario::<$mock>(false).await;
            }
            #[tokio::test]
            async fn streamed() {
                super::super::$scenario::<$mock>(true).await;
            }
        }
    )*};
}
pub(crate) use per_client;
