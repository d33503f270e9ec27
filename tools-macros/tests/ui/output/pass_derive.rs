//! #[derive(ToolOutput)]: compact JSON, or Display text.
#![deny(warnings, missing_docs)]

use toolcall::{ToolOutput, tool};

/// JSON.
#[derive(serde::Serialize, ToolOutput)]
pub struct Weather {
    /// Degrees.
    pub celsius: f32,
}

/// Text.
#[derive(ToolOutput)]
#[tool_output(display)]
pub struct Report(pub String);

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "report: {}", self.0)
    }
}

/// Generic.
#[derive(serde::Serialize, ToolOutput)]
pub struct Page<T> {
    /// Items.
    pub items: Vec<T>,
}

/// Uses a derived output.
#[tool]
pub async fn current(_req: ()) -> Weather {
    Weather { celsius: 21.5 }
}

fn main() {
    assert_eq!(Weather { celsius: 21.5 }.into_content().unwrap(), r#"{"celsius":21.5}"#);
    assert_eq!(Report("ok".into()).into_content().unwrap(), "report: ok");
    assert_eq!(Page { items: vec![1, 2] }.into_content().unwrap(), r#"{"items":[1,2]}"#);
}
