use futures::future::BoxFuture;

use crate::toolset::{Layer, LayerCall};
use crate::{Output, ToolError};

/// A check over the text of every successful output (its text parts and
/// JSON included, as [`Output::to_text`] reads it): `Err(message)` replaces the output
/// with `{"error": message}`, which is what the model reads (a secret that
/// must not leave, an answer too long to be useful).
///
/// ```
/// use toolcall_core::{Toolset, layers::Guardrail};
/// let tools = Toolset::new().with_layer(Guardrail::new(|_call, output| {
///     if output.contains("BEGIN PRIVATE KEY") { Err("the output held a private key and was withheld".into()) } else { Ok(()) }
/// }));
/// ```
pub struct Guardrail<F> {
    check: F,
}

impl<F> Guardrail<F>
where
    F: Fn(LayerCall<'_>, &str) -> Result<(), String> + Send + Sync,
{
    /// Check each output with `check`.
    pub fn new(check: F) -> Self {
        Self { check }
    }
}

impl<F> Layer for Guardrail<F>
where
    F: Fn(LayerCall<'_>, &str) -> Result<(), String> + Send + Sync,
{
    fn after<'a>(&'a self, call: LayerCall<'a>, output: Output) -> BoxFuture<'a, Result<Output, ToolError>> {
        let checked = (self.check)(call, &output.to_text()).map_err(ToolError::failed).map(|()| output);
        Box::pin(std::future::ready(checked))
    }
}

impl<F> std::fmt::Debug for Guardrail<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Guardrail")
    }
}
