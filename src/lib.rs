#![deny(missing_docs)]
#![doc = include_str!("../README.md")]

/// The contract every tool implements; everything in it is re-exported here.
pub use tools_core;
pub use tools_core::*;
