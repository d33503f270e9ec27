use toolcall::tool;

/// Doc.
#[tool(args)]
async fn distance((a, b): (f64, f64)) -> f64 {
    a - b
}

fn main() {}
