use toolcall::tool;

/// Doc.
#[tool]
async fn get_weather<R: serde::de::DeserializeOwned>(_req: R) -> String {
    String::new()
}

fn main() {}
