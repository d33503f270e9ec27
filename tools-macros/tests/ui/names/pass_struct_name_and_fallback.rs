//! struct_name, and the reserved name taken through its opt-in.
use toolcall::toolset::{Toolset, WebSearch};
use toolcall::{Tool, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    q: String,
}

/// Search the web.
#[tool(name = "web_search", web_search_fallback, struct_name = "Fallback")]
async fn search(req: Query) -> String {
    req.q
}

/// Raw identifiers lose their prefix.
#[tool]
async fn r#type(_req: ()) -> u8 {
    1
}

fn main() {
    let mut tools = Toolset::new();
    assert!(tools.add(Fallback).is_err(), "add refuses web_search");
    tools.add_web_search(WebSearch::new().with_fallback(Fallback)).unwrap();
    assert_eq!(tools.get("web_search").unwrap().spec().name(), "web_search");
    assert_eq!(Type.spec().name(), "type");
}
