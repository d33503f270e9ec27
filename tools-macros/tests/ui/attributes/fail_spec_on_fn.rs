use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(spec = self.spec)]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
