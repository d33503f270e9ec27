//! `#[tool]` and `#[derive(ToolOutput)]` for toolcall; use them through
//! the facade crate `toolcall` (or with `toolcall-core`, which the generated code
//! names).
//!
//! The macro runs in three passes, as thiserror's does: `ast`/`attr` parse
//! the input into typed pieces, `valid` checks the rules and collects every
//! error with its span (`ctxt`), `expand` writes the code. Every rule is in
//! `valid`: parsing refuses only what it cannot read (an unknown key, a value
//! of the wrong kind), and `expand` writes code from an input `valid`
//! accepted. A `Ctxt` dropped without its errors checked panics, so none is
//! lost. On error the macro emits the input as written, plus a stand-in impl,
//! so one mistake is one error.
//!
//! # `#[tool]`
//!
//! On a free async fn, it writes a unit struct (the tool's name in
//! UpperCamelCase: `get_weather` -> `GetWeather`) that implements
//! `TypedTool`, and through it `Tool`:
//!
//! ```text
//! /// Current temperature for a city.
//! #[tool(name = "get_weather", read_only, timeout = "5s")]
//! async fn get_weather(ctx: &ToolContext, req: WeatherRequest) -> Result<Weather, WeatherError> { ... }
//! ```
//!
//! On an impl block, the method marked `#[tool(...)]` (taking `&self`) is
//! the tool and the impl's own type implements `TypedTool`, keeping its
//! fields as state:
//!
//! ```text
//! #[tool]
//! impl Search {
//!     /// Search the web.
//!     #[tool(name = "search", spec = self.spec)]
//!     async fn search(&self, req: SearchRequest) -> anyhow::Result<String> { ... }
//! }
//! ```
//!
//! Arguments: at most one context (optional, anywhere), and one request
//! whose type is `Deserialize + JsonSchema`; or, with `args`,
//! named arguments (`city: String, days: Option<u8>`) from which the macro
//! writes the request struct `<Type>Args` (doc comments, `#[serde]` and
//! `#[schemars]` on an argument go to its field; `Option` fields are not
//! required). Returns: `Result<T, E>` (also an alias such as
//! `anyhow::Result<T>`) whose `T` is a `ToolOutput` and `E` converts into
//! `ToolError`, or a plain `ToolOutput` for an infallible tool.
//!
//! The context is found by its type, not its name: it is the argument whose
//! type is a shared reference to `ToolContext` (`&ToolContext`,
//! `&toolcall::ToolContext`: the last path segment counts), whatever it is
//! called. So with `args`, `context: String` or `ctx: String` is an ordinary
//! named argument, a field of the request. A `ToolContext` taken by value or
//! by `&mut` is refused with a message saying to take `&ToolContext`.
//!
//! | key | value | default |
//! |---|---|---|
//! | `name` | `"get_weather"`, must match `^[a-zA-Z0-9_-]{1,64}$` | the fn's name |
//! | `description` | `"..."` | the doc comment up to its first heading (`# Errors`, `# Examples`: sections for Rust readers), lines trimmed and joined (required if there is no doc comment) |
//! | `title` | `"..."` | none |
//! | `read_only`, `destructive`, `idempotent`, `open_world` | flag, or `= true`/`= false` | unset |
//! | `timeout` | `"500ms"`, `"30s"`, `"2m"`, `"1h"`, or several (`"1m30s"`) | none |
//! | `args` | flag: take named arguments (implied when the fn takes nothing but the context) | off |
//! | `blocking` | flag, on a plain (not async) fn: run its body on tokio's blocking pool, the timeout still enforced | off |
//! | `deny_unknown_fields` | flag: refuse fields the schema does not name, naming them (`ToolSpec::deny_unknown_fields`) | off: ignored, as serde does |
//! | `example` | a JSON object of example arguments, e.g. `example = r#"{"city": "Paris"}"#`; repeat it for more (`ToolSpec::with_example`); it must fit the schema, checked when the provider definitions are built | none |
//! | `needs_approval` | flag: every call waits for a person's approval (`ToolSpec::needs_approval`); a toolset never runs it unapproved | off |
//! | `struct_name` | `"Weather"` (free fns only) | the tool's name in UpperCamelCase (`get_weather` -> `GetWeather`, also for `async fn run`) |
//! | `spec` | `self.field` (method form only): a `ToolSpec` field the type fills at runtime | a `static` built once |
//! | `web_search_fallback` | flag: allow the reserved name `web_search` | off |
//! | `crate` | `"my_tools"`: the path to the facade or `toolcall-core` | found in Cargo.toml |
//!
//! Each item takes one `#[tool]`, and a key is given once: a second
//! `#[tool]` on a fn, a method or an impl block, or a key given twice, is an
//! error on the second; only `example` adds one more each time.
//!
//! Each tool type also gets `fn tool_spec() -> ToolSpec`: the spec the
//! attribute declares, for a stateful tool to start from
//! (`Self::tool_spec().with_name(...)`).
//!
//! # `#[derive(ToolOutput)]`
//!
//! Compact JSON of a `Serialize` type; with `#[tool_output(display)]`, its
//! `Display` text. `#[tool_output(crate = "...")]` as above.

#![deny(missing_docs)]

mod ast;
mod attr;
mod ctxt;
mod expand;
mod krate;
mod output;
#[cfg(test)]
mod snapshots;
mod valid;

use proc_macro::TokenStream;

/// Turn an async fn, or an impl block with a method marked `#[tool]`, into
/// a tool. See the [crate docs](crate) for the keys.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Implement `ToolOutput` as compact JSON (or `Display` text with
/// `#[tool_output(display)]`).
#[proc_macro_derive(ToolOutput, attributes(tool_output))]
pub fn derive_tool_output(input: TokenStream) -> TokenStream {
    output::derive(input.into()).into()
}
