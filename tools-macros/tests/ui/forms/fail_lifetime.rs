use toolcall::tool;

/// Doc.
#[tool(args)]
async fn get_weather(city: &str) -> String {
    city.to_owned()
}

fn main() {}
