//! What the tests share.

pub mod ag;
pub mod many_tools;
pub mod openai;
pub mod replies;
