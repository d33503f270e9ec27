//! The keys of `#[tool(...)]` and `#[tool_output(...)]`, parsed into typed
//! values. A key that does not exist or a value that is not of the key's
//! kind cannot be parsed, and is an error spanned on the key; a repeated key
//! is recorded for `valid` to refuse. Parsing goes on after an error, so
//! every mistake is reported.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Path};

use crate::ctxt::Ctxt;

/// The keys `#[tool(...)]` accepts, for the "unknown key" message.
const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "title",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "timeout",
    "struct_name",
    "spec",
    "args",
    "blocking",
    "deny_unknown_fields",
    "needs_approval",
    "example",
    "web_search_fallback",
    "crate",
];

/// The keys that may be given more than once, each time adding a value.
const REPEATABLE_KEYS: &[&str] = &["example"];

/// The keys `#[tool_output(...)]` accepts.
const OUTPUT_KEYS: &[&str] = &["display", "crate"];

/// A string value and the span of its key.
pub(crate) struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// Everything `#[tool(...)]` said.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub name: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub title: Option<String>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
    pub timeout: Option<Duration>,
    pub struct_name: Option<Ident>,
    pub spec: Option<Spanned<Expr>>,
    pub args: bool,
    /// `blocking`, with the key's span.
    pub blocking: Option<Span>,
    pub deny_unknown_fields: bool,
    pub needs_approval: bool,
    /// Each `example = "..."`, in order: JSON text, checked by `valid`.
    pub examples: Vec<LitStr>,
    pub web_search_fallback: bool,
    pub krate: Option<Path>,
    /// The keys given so far, to notice a repeated one.
    seen: Vec<String>,
    /// Each key given again after its first time (the first value is kept).
    pub repeated: Vec<Path>,
    /// A key was not one of ours: it may have been meant as one that now
    /// looks missing, so that absence is not reported as a second error.
    pub unknown_key: bool,
}

/// Parse the tokens inside `#[tool(...)]`, recording errors in `cx`.
pub(crate) fn parse_tool_attr(cx: &mut Ctxt, tokens: TokenStream) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_else(|| path_text(&meta.path));
        let value = parse_value(&meta)?;
        if attr.seen.contains(&key) && !REPEATABLE_KEYS.contains(&key.as_str()) {
            attr.repeated.push(meta.path.clone());
            return Ok(());
        }
        attr.seen.push(key.clone());
        let path = &meta.path;
        match key.as_str() {
            "name" => {
                attr.name =
                    string(cx, path, &key, value).map(|v| Spanned { value: v.value(), span: v.span() })
            }
            "description" => {
                attr.description =
                    string(cx, path, &key, value).map(|v| Spanned { value: v.value(), span: v.span() })
            }
            "title" => attr.title = string(cx, path, &key, value).map(|v| v.value()),
            "read_only" => attr.read_only = flag(cx, path, &key, value),
            "destructive" => attr.destructive = flag(cx, path, &key, value),
            "idempotent" => attr.idempotent = flag(cx, path, &key, value),
            "open_world" => attr.open_world = flag(cx, path, &key, value),
            "args" => attr.args = flag(cx, path, &key, value).unwrap_or(false),
            "blocking" => {
                let on = flag(cx, path, &key, value).unwrap_or(false);
                attr.blocking = on.then(|| syn::spanned::Spanned::span(path));
            }
            "deny_unknown_fields" => attr.deny_unknown_fields = flag(cx, path, &key, value).unwrap_or(false),
            "needs_approval" => attr.needs_approval = flag(cx, path, &key, value).unwrap_or(false),
            "example" => attr.examples.extend(string(cx, path, &key, value)),
            "web_search_fallback" => attr.web_search_fallback = flag(cx, path, &key, value).unwrap_or(false),
            "timeout" => {
                if let Some(text) = string(cx, path, &key, value) {
                    match parse_duration(&text.value()) {
                        Some(duration) => attr.timeout = Some(duration),
                        None => cx.error_spanned_by(
                            path,
                            format!(
                                "`timeout = {:?}` is not a duration: write a number and a unit, \
                                 e.g. `timeout = \"500ms\"`, `\"30s\"`, `\"2m\"` or `\"1h\"`",
                                text.value()
                            ),
                        ),
                    }
                }
            }
            "struct_name" => {
                if let Some(text) = string(cx, path, &key, value) {
                    match syn::parse_str::<Ident>(&text.value()) {
                        Ok(ident) => attr.struct_name = Some(Ident::new(&ident.to_string(), text.span())),
                        Err(_) => cx.error_spanned_by(
                            path,
                            format!("`struct_name = {:?}` is not a Rust identifier", text.value()),
                        ),
                    }
                }
            }
            "crate" => {
                if let Some(text) = string(cx, path, &key, value) {
                    match text.parse::<Path>() {
                        Ok(krate) => attr.krate = Some(krate),
                        Err(_) => cx.error_spanned_by(
                            path,
                            format!(
                                "`crate = {:?}` is not a path: write e.g. `crate = \"my_tools\"`",
                                text.value()
                            ),
                        ),
                    }
                }
            }
            "spec" => match value {
                Some(expr) => attr.spec = Some(Spanned { value: expr, span: span_of(path) }),
                None => cx.error_spanned_by(
                    path,
                    "`spec` takes the field that holds the tool's spec: write `spec = self.spec`",
                ),
            },
            _ => {
                attr.unknown_key = true;
                cx.error_spanned_by(path, unknown_key(&key, "tool", TOOL_KEYS));
            }
        }
        Ok(())
    });
    if let Err(error) = syn::parse::Parser::parse2(parser, tokens) {
        cx.syn_error(error);
    }
    attr
}

/// Everything `#[tool_output(...)]` said.
#[derive(Default)]
pub(crate) struct OutputAttr {
    pub display: bool,
    pub krate: Option<Path>,
    /// The keys given so far, over all `#[tool_output]` attributes.
    seen: Vec<String>,
    /// Each key given again after its first time (the first value is kept).
    pub repeated: Vec<Path>,
}

/// Parse one `#[tool_output(...)]` attribute into `out`.
pub(crate) fn parse_output_attr(cx: &mut Ctxt, attr: &syn::Attribute, out: &mut OutputAttr) {
    let result = attr.parse_nested_meta(|meta| {
        let key = path_text(&meta.path);
        let value = parse_value(&meta)?;
        if out.seen.contains(&key) {
            out.repeated.push(meta.path.clone());
            return Ok(());
        }
        out.seen.push(key.clone());
        match key.as_str() {
            "display" => out.display = flag(cx, &meta.path, &key, value).unwrap_or(false),
            "crate" => {
                if let Some(text) = string(cx, &meta.path, &key, value) {
                    match text.parse::<Path>() {
                        Ok(krate) => out.krate = Some(krate),
                        Err(_) => cx.error_spanned_by(
                            &meta.path,
                            format!("`crate = {:?}` is not a path", text.value()),
                        ),
                    }
                }
            }
            _ => cx.error_spanned_by(&meta.path, unknown_key(&key, "tool_output", OUTPUT_KEYS)),
        }
        Ok(())
    });
    if let Err(error) = result {
        cx.syn_error(error);
    }
}

/// "unknown key": the key it most likely meant (`desciption`, `readonly`,
/// `readOnly`), else the list of keys.
fn unknown_key(key: &str, attr: &str, keys: &[&str]) -> String {
    let plain = |key: &str| key.replace('_', "").to_lowercase();
    let best = keys
        .iter()
        .map(|known| (strsim::normalized_damerau_levenshtein(&plain(key), &plain(known)), known))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((score, known)) if score >= 0.7 => {
            format!("unknown key `{key}` in #[{attr}]: did you mean `{known}`?")
        }
        _ => format!("unknown key `{key}` in #[{attr}]: expected one of {}", keys.join(", ")),
    }
}

/// The value after `=`, if there is one, as an expression: keeps parsing
/// whatever kind it is, so the kind can be checked against the key.
fn parse_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Expr>> {
    if meta.input.peek(syn::Token![=]) {
        Ok(Some(meta.value()?.parse()?))
    } else if meta.input.is_empty() || meta.input.peek(syn::Token![,]) {
        Ok(None)
    } else {
        Err(meta.error("expected `=` and a value, or `,`"))
    }
}

fn string(cx: &mut Ctxt, path: &Path, key: &str, value: Option<Expr>) -> Option<LitStr> {
    match value {
        Some(Expr::Lit(ExprLit { lit: Lit::Str(text), .. })) => Some(text),
        _ => {
            cx.error_spanned_by(path, format!("`{key}` takes a string: write `{key} = \"...\"`"));
            None
        }
    }
}

fn flag(cx: &mut Ctxt, path: &Path, key: &str, value: Option<Expr>) -> Option<bool> {
    match value {
        None => Some(true),
        Some(Expr::Lit(ExprLit { lit: Lit::Bool(yes), .. })) => Some(yes.value),
        Some(_) => {
            cx.error_spanned_by(path, format!("`{key}` takes a bool: write `{key}` or `{key} = false`"));
            None
        }
    }
}

/// A key as written: `name`, or `a::b` for a key that is a path.
pub(crate) fn path_text(path: &Path) -> String {
    path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::")
}

fn span_of(path: &Path) -> Span {
    path.segments.first().map_or_else(Span::call_site, |s| s.ident.span())
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"`, or several (`"1m30s"`).
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let number: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let part = match &rest[..unit] {
            "ms" => Duration::from_millis(number),
            "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number.checked_mul(60)?),
            "h" => Duration::from_secs(number.checked_mul(3600)?),
            _ => return None,
        };
        total = total.checked_add(part)?;
        rest = &rest[unit..];
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("30"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("3 days"), None);
    }
}
