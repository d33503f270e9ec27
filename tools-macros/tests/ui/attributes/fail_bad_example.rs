use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {
    city: String,
}

/// Doc.
#[tool(example = r#"{"city": "Paris""#, example = r#"["Paris"]"#)]
async fn get_weather(req: Req) -> String {
    req.city
}

fn main() {}
