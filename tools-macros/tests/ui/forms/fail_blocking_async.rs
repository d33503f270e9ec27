use toolcall::{ToolContext, tool};

/// Reads a file.
#[tool(blocking)]
async fn read_file(_ctx: &ToolContext) -> String {
    String::new()
}

fn main() {}
