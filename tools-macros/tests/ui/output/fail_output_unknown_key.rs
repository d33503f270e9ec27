use toolcall::ToolOutput;

#[derive(serde::Serialize, ToolOutput)]
#[tool_output(json)]
struct Weather {
    celsius: f32,
}

fn main() {}
