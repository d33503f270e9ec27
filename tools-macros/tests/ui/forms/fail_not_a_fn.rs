use toolcall::tool;

/// Doc.
#[tool]
struct Search;

fn main() {}
