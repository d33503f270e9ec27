use toolcall::ToolOutput;

#[derive(ToolOutput)]
struct Weather {
    celsius: f32,
}

fn main() {}
