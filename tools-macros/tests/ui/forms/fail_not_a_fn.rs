use tools::tool;

/// Doc.
#[tool]
struct Search;

fn main() {}
