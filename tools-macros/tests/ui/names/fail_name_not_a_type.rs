use toolcall::{ToolContext, tool};

/// Render a scene in 3D.
#[tool(name = "3d_render")]
async fn render(_ctx: &ToolContext) -> String {
    String::new()
}

fn main() {}
