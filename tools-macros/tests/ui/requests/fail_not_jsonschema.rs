use toolcall::tool;

#[derive(serde::Deserialize)]
struct Req {
    city: String,
}

/// Doc.
#[tool]
async fn get_weather(req: Req) -> String {
    req.city
}

fn main() {}
