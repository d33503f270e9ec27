use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

struct Search;

#[tool]
impl Search {
    /// Doc.
    #[tool]
    async fn search(self, _req: Req) -> String {
        String::new()
    }
}

fn main() {}
