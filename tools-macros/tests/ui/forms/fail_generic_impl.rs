use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

struct Search<T>(T);

#[tool]
impl<T: Send + Sync> Search<T> {
    /// Doc.
    #[tool]
    async fn search(&self, _req: Req) -> String {
        String::new()
    }
}

fn main() {}
