use tools::{ToolContext, tool};

/// Doc.
#[tool]
async fn now(_ctx: &ToolContext) -> u64 {
    0
}

fn main() {}
