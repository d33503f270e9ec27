use toolcall::{ToolContext, tool};

struct Files;

#[tool]
impl Files {
    /// Reads a file.
    #[tool(blocking)]
    async fn read_file(&self, _ctx: &ToolContext) -> String {
        String::new()
    }
}

fn main() {}
