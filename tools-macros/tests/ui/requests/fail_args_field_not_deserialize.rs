use toolcall::tool;

struct Opaque;

/// Doc.
#[tool(args)]
async fn get_weather(city: String, _extra: Opaque) -> String {
    city
}

fn main() {}
