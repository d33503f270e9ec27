//! The typed AST of a `#[tool]` input: a free async fn, or an impl block
//! with one method marked `#[tool]`. Parsing only sorts the pieces; the
//! rules live in `valid.rs`.

use proc_macro2::{Span, TokenStream};
use syn::{Attribute, FnArg, Ident, ImplItem, ImplItemFn, ItemFn, ItemImpl, Pat, Signature, Type};

use crate::attr::{ToolAttr, parse_tool_attr};
use crate::ctxt::Ctxt;

/// What `#[tool]` was put on.
pub(crate) enum Input {
    /// `#[tool] async fn ...`
    Fn(ItemFn),
    /// `#[tool] impl T { #[tool] async fn ...(&self, ...) }`
    Impl(ItemImpl),
}

/// The method form: the impl block, what its own `#[tool]` said, and the
/// tool of its marked method.
pub(crate) struct ToolImpl<'a> {
    pub item: &'a ItemImpl,
    /// The tokens inside the impl's own `#[tool(...)]`; the options belong
    /// on the method, so `valid` refuses any.
    pub options: TokenStream,
    /// Further `#[tool]` attributes on the impl block, after the one that
    /// runs the macro.
    pub repeated: Vec<&'a Attribute>,
    /// The methods marked `#[tool]`, in order; one is the rule.
    pub marked: Vec<&'a ImplItemFn>,
    /// The tool of the first marked method.
    pub tool: Option<Tool<'a>>,
}

/// A tool: its options, its docs and the signature of its async fn.
pub(crate) struct Tool<'a> {
    pub attr: ToolAttr,
    /// `#[tool]` attributes after the one whose keys are in `attr`. The
    /// second would otherwise win silently (method form) or expand the fn a
    /// second time (free fn).
    pub repeated: Vec<&'a Attribute>,
    /// The doc comment, lines trimmed and joined.
    pub docs: Option<String>,
    pub sig: &'a Signature,
    /// `Some` for the method form: the type that holds the state.
    pub self_ty: Option<&'a Type>,
    /// The `&self` (or wrong) receiver, for the method form's checks.
    pub receiver: Option<&'a syn::Receiver>,
    pub args: Vec<Arg<'a>>,
    pub ret: Return<'a>,
}

/// One argument of the fn, besides the receiver.
pub(crate) struct Arg<'a> {
    pub pat: &'a Pat,
    pub ty: &'a Type,
    /// `#[doc]`, `#[serde]` and `#[schemars]` on the argument: they go to the
    /// field of the generated request struct.
    pub field_attrs: Vec<&'a Attribute>,
    /// Whether this is the context, by its type (see `is_context_type`).
    pub is_ctx: bool,
}

/// What the fn returns.
pub(crate) enum Return<'a> {
    /// `Result<T, E>`, spelled with both parameters.
    Result { ok: &'a Type, err: &'a Type },
    /// A `Result` alias with one parameter (`anyhow::Result<T>`).
    ResultAlias(&'a Type),
    /// Anything else, or nothing (`()`): an infallible tool.
    Plain(Option<&'a Type>),
}

impl Input {
    /// Parse the item under `#[tool]`.
    pub(crate) fn parse(item: TokenStream) -> syn::Result<Self> {
        match syn::parse2::<syn::Item>(item)? {
            syn::Item::Fn(item) => Ok(Self::Fn(item)),
            syn::Item::Impl(item) => Ok(Self::Impl(item)),
            other => Err(syn::Error::new_spanned(
                other,
                "#[tool] goes on an async fn, or on an impl block whose tool method is marked #[tool]",
            )),
        }
    }
}

impl<'a> ToolImpl<'a> {
    /// The method form from an impl block and the tokens of its `#[tool(...)]`.
    pub(crate) fn from_impl(cx: &mut Ctxt, options: TokenStream, item: &'a ItemImpl) -> Self {
        let marked = marked_methods(item);
        let tool = marked.first().map(|method| Tool::from_method(cx, &item.self_ty, method));
        let repeated = item.attrs.iter().filter(|a| is_tool_attr(a)).collect();
        Self { item, options, repeated, marked, tool }
    }
}

impl<'a> Tool<'a> {
    /// A tool from a free fn and the tokens of its `#[tool(...)]`. The
    /// attribute that runs the macro is not in `item.attrs`, so any there
    /// is a second one.
    pub(crate) fn from_fn(cx: &mut Ctxt, attr: TokenStream, item: &'a ItemFn) -> Self {
        let attr = parse_tool_attr(cx, attr);
        let repeated = item.attrs.iter().filter(|a| is_tool_attr(a)).collect();
        Self::new(attr, repeated, &item.attrs, &item.sig, None)
    }

    /// A tool from the marked method of an impl block: its first `#[tool]`
    /// gives the keys; the others are only recorded, their keys unread.
    pub(crate) fn from_method(cx: &mut Ctxt, self_ty: &'a Type, method: &'a ImplItemFn) -> Self {
        let mut markers = method.attrs.iter().filter(|a| is_tool_attr(a));
        let tokens = match markers.next().map(|marker| &marker.meta) {
            Some(syn::Meta::List(list)) => list.tokens.clone(),
            Some(syn::Meta::NameValue(nv)) => {
                cx.error_spanned_by(nv, "write #[tool] or #[tool(key = value, ...)]");
                TokenStream::new()
            }
            Some(syn::Meta::Path(_)) | None => TokenStream::new(),
        };
        let attr = parse_tool_attr(cx, tokens);
        Self::new(attr, markers.collect(), &method.attrs, &method.sig, Some(self_ty))
    }

    fn new(
        attr: ToolAttr,
        repeated: Vec<&'a Attribute>,
        attrs: &'a [Attribute],
        sig: &'a Signature,
        self_ty: Option<&'a Type>,
    ) -> Self {
        let mut receiver = None;
        let mut args = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => receiver = Some(r),
                FnArg::Typed(typed) => args.push(Arg {
                    pat: &typed.pat,
                    ty: &typed.ty,
                    field_attrs: typed.attrs.iter().filter(|a| is_field_attr(a)).collect(),
                    is_ctx: is_context_type(&typed.ty),
                }),
            }
        }
        Self { attr, repeated, docs: docs(attrs), sig, self_ty, receiver, args, ret: Return::of(&sig.output) }
    }

    /// The request arguments: all but the context.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Arg<'a>> {
        self.args.iter().filter(|arg| !arg.is_ctx)
    }

    /// The tool's name: the `name` key, or the fn's name.
    pub(crate) fn name(&self) -> (String, Span) {
        match &self.attr.name {
            Some(name) => (name.value.clone(), name.span),
            None => (unraw(&self.sig.ident), self.sig.ident.span()),
        }
    }

    /// The generated struct's name: `struct_name`, or the tool's name in
    /// UpperCamelCase (`get_weather` -> `GetWeather`), so that tools written
    /// as `async fn run` in modules of their own get types of their own.
    /// `None` when that is not an identifier (`3d_render`).
    pub(crate) fn struct_name(&self) -> Option<Ident> {
        match &self.attr.struct_name {
            Some(ident) => Some(ident.clone()),
            None => {
                let name = syn::parse_str::<Ident>(&upper_camel(&self.name().0)).ok()?;
                Some(Ident::new(&name.to_string(), self.sig.ident.span()))
            }
        }
    }

    /// The fn's name in UpperCamelCase: where the tool's name gives no
    /// identifier, the stand-in written on error is named so.
    pub(crate) fn fn_struct_name(&self) -> Ident {
        Ident::new(&upper_camel(&unraw(&self.sig.ident)), self.sig.ident.span())
    }

    /// Whether the macro writes the request struct: `#[tool(args)]`, or a
    /// tool with no arguments but the context (its request is `{}`).
    pub(crate) fn takes_args(&self) -> bool {
        self.attr.args || self.inputs().next().is_none()
    }
}

impl<'a> Return<'a> {
    fn of(output: &'a syn::ReturnType) -> Self {
        let syn::ReturnType::Type(_, ty) = output else {
            return Self::Plain(None);
        };
        if let Type::Path(path) = &**ty
            && path.qself.is_none()
            && let Some(last) = path.path.segments.last()
            && last.ident == "Result"
            && let syn::PathArguments::AngleBracketed(generics) = &last.arguments
        {
            let types: Vec<&Type> = generics
                .args
                .iter()
                .filter_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            match types.as_slice() {
                [ok, err] => return Self::Result { ok, err },
                [_] => return Self::ResultAlias(ty),
                _ => {}
            }
        }
        Self::Plain(Some(ty))
    }
}

/// Whether an attribute is `#[tool]` or `#[tool(...)]`.
pub(crate) fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("tool")
}

/// Attributes of an argument that belong to the generated request field.
pub(crate) fn is_field_attr(attr: &Attribute) -> bool {
    let path = attr.path();
    path.is_ident("doc") || path.is_ident("serde") || path.is_ident("schemars")
}

/// An argument is the context if its type's last path segment is
/// `ToolContext`, under any references (`&ToolContext`,
/// `&toolcall::ToolContext`), whatever the argument is called: `context: String`
/// is an ordinary argument. A `ToolContext` by value or behind `&mut` is
/// still the context, so `valid` reports it as a context of the wrong form,
/// not as a request.
fn is_context_type(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|ident| ident == "ToolContext")
}

/// The last path segment of a type, under any references.
pub(crate) fn last_segment(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Reference(reference) => last_segment(&reference.elem),
        Type::Paren(inner) => last_segment(&inner.elem),
        Type::Path(path) => path.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

/// The doc comment: each line trimmed; lines joined by spaces, blank lines
/// kept as paragraph breaks.
pub(crate) fn docs(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) = &nv.value
        {
            lines.extend(text.value().split('\n').map(|line| line.trim().to_owned()));
        }
    }
    let mut out = String::new();
    let mut blank = false;
    let mut fenced = false;
    for line in lines {
        fenced ^= line.starts_with("```");
        // A heading starts the sections written for Rust readers (`# Errors`,
        // `# Examples`): the model reads what comes before.
        if !fenced && line.starts_with('#') && line.trim_start_matches('#').starts_with(' ') {
            break;
        }
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { " " });
        }
        blank = false;
        out.push_str(&line);
    }
    (!out.is_empty()).then_some(out)
}

fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

pub(crate) fn upper_camel(snake: &str) -> String {
    let mut out = String::new();
    for part in snake.split(['_', '-']).filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() { "Tool".to_owned() } else { out }
}

/// The impl block's methods marked `#[tool]`.
fn marked_methods(item: &ItemImpl) -> Vec<&ImplItemFn> {
    item.items
        .iter()
        .filter_map(|i| match i {
            ImplItem::Fn(f) if f.attrs.iter().any(is_tool_attr) => Some(f),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_docs() {
        assert_eq!(upper_camel("get_weather"), "GetWeather");
        assert_eq!(upper_camel("_x__y"), "XY");
        assert_eq!(upper_camel("list-open_issues"), "ListOpenIssues");
        let item: ItemFn = syn::parse_quote! {
            /// Current temperature
            ///   for a city.
            ///
            /// Second paragraph.
            async fn f() {}
        };
        assert_eq!(docs(&item.attrs).unwrap(), "Current temperature for a city.\n\nSecond paragraph.");
    }

    #[test]
    fn the_description_ends_at_the_first_heading_outside_code() {
        let item: ItemFn = syn::parse_quote! {
            /// Search the web.
            ///
            /// ```
            /// # let hidden = 1;
            /// ```
            ///
            /// # Errors
            ///
            /// When the API is down.
            async fn f() {}
        };
        assert_eq!(docs(&item.attrs).unwrap(), "Search the web.\n\n``` # let hidden = 1; ```");
    }
}
