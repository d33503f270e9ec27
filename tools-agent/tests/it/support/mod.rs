//! What the tests share.

pub(crate) mod ag;
pub(crate) mod many_tools;
pub(crate) mod openai;
pub(crate) mod replies;
