//! The toolset: a registry of tools under their lower-cased names, and the
//! executor that runs one model turn's calls against it.

mod counters;
mod names;
mod observe;
mod registry;
mod run;

pub use counters::CallCounts;
pub use names::{NameError, RESERVED_WEB_SEARCH, validate_name};
pub use observe::Observer;
pub use registry::{Toolset, ToolsetError, WebSearch};
