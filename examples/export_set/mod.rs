//! The example tools whose exported schemas are kept under version control
//! in `schemas/` (checked by `tests/it/exported_schemas.rs`). Add a tool here
//! with one line.

#[path = "../hand_written.rs"]
#[allow(dead_code)]
mod hand_written;

use toolcall::Toolset;

/// The toolset of every example tool.
pub(crate) fn toolset() -> Toolset {
    let mut tools = Toolset::new();
    tools.add(hand_written::GetForecast).expect("the example tools have distinct, valid names");
    // Only the definition is exported: the key is never sent anywhere.
    let tavily = toolcall_tavily::Tavily::from_api_key("tvly-export-only").expect("a well-formed key");
    tools.add(tavily).expect("the example tools have distinct, valid names");
    tools
}
