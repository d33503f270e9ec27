use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req<'a> {
    city: &'a str,
}

/// Doc.
#[tool]
async fn get_weather(req: Req<'_>) -> String {
    req.city.to_owned()
}

fn main() {}
