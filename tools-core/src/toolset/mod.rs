//! The toolset: a registry of tools under their lower-cased names.

mod call_one;
mod names;
mod registry;

pub use names::{NameError, RESERVED_WEB_SEARCH, validate_name};
pub use registry::{Toolset, ToolsetError, WebSearch};
