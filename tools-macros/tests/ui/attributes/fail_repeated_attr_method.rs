//! A second #[tool] on the tool method: an error, not the last one winning.
use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

struct Search;

#[tool]
impl Search {
    /// Doc.
    #[tool(name = "search")]
    #[tool(read_only)]
    async fn search(&self, _req: Req) -> String {
        String::new()
    }
}

fn main() {}
