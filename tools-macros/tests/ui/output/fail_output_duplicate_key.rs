//! A key repeated across two #[tool_output] attributes.
use toolcall::ToolOutput;

#[derive(ToolOutput)]
#[tool_output(display)]
#[tool_output(display = false)]
struct Weather {
    celsius: f32,
}

impl std::fmt::Display for Weather {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} C", self.celsius)
    }
}

fn main() {}
