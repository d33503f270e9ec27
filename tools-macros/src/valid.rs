//! The rules a `#[tool]` or `#[tool_output]` input must follow, each failure
//! an error on the user's own code saying how to fix it.

use syn::visit::Visit;
use syn::{Pat, Path, Type};

use crate::ast::{Arg, Tool, ToolImpl, last_segment};
use crate::attr::{OutputAttr, path_text};
use crate::ctxt::Ctxt;

/// The name providers reserve for their native web search.
const RESERVED_WEB_SEARCH: &str = "web_search";

/// Check a tool, recording every broken rule.
pub(crate) fn check_tool(cx: &mut Ctxt, tool: &Tool<'_>) {
    check_repeated(cx, tool);
    check_signature(cx, tool);
    check_receiver(cx, tool);
    check_ctx(cx, tool);
    check_requests(cx, tool);
    check_name(cx, tool);
    check_description(cx, tool);
    check_keys(cx, tool);
}

/// Check the method form: the impl block, its marked methods and the tool.
pub(crate) fn check_impl(cx: &mut Ctxt, input: &ToolImpl<'_>) {
    let item = input.item;
    for attr in &input.repeated {
        cx.error_spanned_by(
            attr,
            "#[tool] is given twice on this impl block: remove the second #[tool] (the options go on the \
             tool method)",
        );
    }
    if !input.options.is_empty() {
        cx.error_spanned_by(
            &input.options,
            "on the impl block write a bare #[tool]; the options go on the method: #[tool(name = \"...\")]",
        );
    }
    if let Some((path, _)) = &item.trait_ {
        cx.error_spanned_by(
            path,
            "#[tool] goes on an inherent impl (`impl MyTool { ... }`), not a trait impl",
        );
    }
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &item.generics,
            "#[tool] does not support generic tool types: implement `TypedTool` by hand, or make the type concrete",
        );
    }
    if !matches!(&*item.self_ty, Type::Path(_)) {
        cx.error_spanned_by(&item.self_ty, "#[tool] needs a named type here: `impl MyTool { ... }`");
    }
    if input.marked.is_empty() {
        cx.error_spanned_by(
            &item.self_ty,
            "no method of this impl is marked as the tool: put #[tool] on the async method that runs it",
        );
    }
    for extra in input.marked.iter().skip(1) {
        cx.error_spanned_by(
            &extra.sig.ident,
            "only one method of the impl can be the tool: one type, one tool",
        );
    }
    if let Some(tool) = &input.tool {
        check_tool(cx, tool);
    }
}

/// Check what `#[tool_output(...)]` said.
pub(crate) fn check_output(cx: &mut Ctxt, attr: &OutputAttr) {
    repeated_keys(cx, "tool_output", &attr.repeated);
}

fn check_repeated(cx: &mut Ctxt, tool: &Tool<'_>) {
    let what = if tool.self_ty.is_some() { "method" } else { "fn" };
    for attr in &tool.repeated {
        cx.error_spanned_by(
            attr,
            format!(
                "#[tool] is given twice on this {what}: remove the second #[tool] and put all the keys in the \
                 first, e.g. `#[tool(name = \"get_weather\", read_only)]`"
            ),
        );
    }
}

fn check_signature(cx: &mut Ctxt, tool: &Tool<'_>) {
    let sig = tool.sig;
    match (sig.asyncness, tool.attr.blocking) {
        (_, Some(span)) if tool.self_ty.is_some() => cx.syn_error(syn::Error::new(
            span,
            "`blocking` is for free fns: a method borrows `self`, which the blocking pool cannot hold; write a \
             free `#[tool(blocking)] fn`, or `tokio::task::spawn_blocking` inside the method",
        )),
        (None, None) => cx.error_spanned_by(
            sig.fn_token,
            format!(
                "a tool fn must be async: write `async fn {}`, or `#[tool(blocking)]` on a plain fn whose body \
                 blocks (it then runs on the blocking pool)",
                sig.ident
            ),
        ),
        (Some(asyncness), Some(_)) => cx.error_spanned_by(
            asyncness,
            "a `blocking` tool is a plain fn, run on the blocking pool: remove `async` (or remove `blocking` \
             and keep the async body from blocking)",
        ),
        _ => {}
    }
    if let Some(constness) = sig.constness {
        cx.error_spanned_by(constness, "a tool fn cannot be const");
    }
    if !matches!(sig.safety, syn::Safety::Default) {
        cx.error_spanned_by(&sig.safety, "a tool fn cannot be unsafe: a model calls it with any arguments");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a tool fn cannot have an extern ABI");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "a tool fn cannot be variadic");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "#[tool] does not support generic or lifetime parameters: the request is parsed into one concrete, \
             owned type; remove them (use owned types such as String instead of &str)",
        );
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        borrowed(cx, ty, "the return type", true);
    }
}

fn check_receiver(cx: &mut Ctxt, tool: &Tool<'_>) {
    match (tool.self_ty, tool.receiver) {
        (None, Some(receiver)) => cx.error_spanned_by(
            receiver,
            "a method tool needs #[tool] on its impl block as well: write #[tool] above `impl MyTool { ... }` \
             and keep #[tool(...)] on this method",
        ),
        (Some(_), None) => cx.error_spanned_by(
            &tool.sig.ident,
            "the tool method takes `&self`: write `async fn run(&self, ...)`, or make it a free fn with #[tool]",
        ),
        (Some(_), Some(receiver)) => {
            match &receiver.kind {
                syn::ReceiverKind::Typed(..) => {
                    cx.error_spanned_by(receiver, "the tool method takes plain `&self`, not a typed receiver")
                }
                syn::ReceiverKind::Reference(_, _, Some(_)) => cx.error_spanned_by(
                    receiver,
                    "the tool method takes `&mut self`: take `&self`, calls run concurrently (put mutable state \
                     behind a Mutex)",
                ),
                syn::ReceiverKind::Reference(_, Some(lifetime), None) => {
                    cx.error_spanned_by(lifetime, "the tool method takes plain `&self`: remove the lifetime")
                }
                syn::ReceiverKind::Reference(_, None, None) => {}
                _ => cx.error_spanned_by(
                    receiver,
                    "the tool method takes `self` by value: take `&self`, the toolset shares one instance \
                     across calls",
                ),
            }
        }
        (None, None) => {}
    }
}

fn check_ctx(cx: &mut Ctxt, tool: &Tool<'_>) {
    let mut seen = false;
    for arg in tool.args.iter().filter(|a| a.is_ctx) {
        if seen {
            cx.error_spanned_by(arg.pat, "a tool takes at most one `&ToolContext` argument");
        }
        seen = true;
        let ok = matches!(arg.ty, Type::Reference(r)
            if r.mutability.is_none() && r.lifetime.is_none()
                && last_segment(&r.elem).is_some_and(|i| i == "ToolContext")
                && matches!(&*r.elem, Type::Path(_)));
        if !ok {
            cx.error_spanned_by(
                arg.ty,
                "the context argument must be a shared reference to the SDK's context: write `ctx: &ToolContext`",
            );
        }
    }
}

fn check_requests(cx: &mut Ctxt, tool: &Tool<'_>) {
    let inputs: Vec<_> = tool.inputs().collect();
    if tool.takes_args() {
        for arg in &inputs {
            match arg.pat {
                Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {}
                _ => cx.error_spanned_by(
                    arg.pat,
                    "with #[tool(args)] each argument is a named field of the request: write `city: String`",
                ),
            }
            borrowed(cx, arg.ty, "an argument", false);
        }
        return;
    }
    // Beside another argument, a reference is most likely a context of the
    // wrong type (the context is found by its type, not its name): say so
    // there, rather than call the real request "a second request".
    let (refs, owned): (Vec<&Arg<'_>>, Vec<&Arg<'_>>) = if inputs.len() > 1 {
        inputs.iter().copied().partition(|arg| matches!(arg.ty, Type::Reference(_)))
    } else {
        (Vec::new(), inputs)
    };
    for arg in &refs {
        cx.error_spanned_by(
            arg.ty,
            "this reference is neither the context nor the request: the context is found by its type, write \
             `ctx: &ToolContext` (the SDK's), and the request is an owned type (`req: WeatherRequest`)",
        );
    }
    match owned.as_slice() {
        [] => {}
        [request] => borrowed(cx, request.ty, "the request type", false),
        [_, second, ..] => {
            let (pat, ty) = (second.pat, second.ty);
            cx.error_spanned_by(
                quote::quote!(#pat: #ty),
                "a tool takes one request, and this is a second: put the fields in one struct, or write \
                 #[tool(args)] to take named arguments and let the macro write the request struct",
            );
        }
    }
}

fn check_name(cx: &mut Ctxt, tool: &Tool<'_>) {
    let (name, span) = tool.name();
    let len = name.chars().count();
    let bad = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'));
    if len == 0 || len > 64 || bad.is_some() {
        let why = match bad {
            Some(c) if len <= 64 && len > 0 => format!("it contains {c:?}"),
            _ => format!("it is {len} characters long"),
        };
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "tool name `{name}` is refused by the model providers ({why}): a name must match \
                 ^[a-zA-Z0-9_-]{{1,64}}$, e.g. `name = \"get_weather\"`"
            ),
        ));
        return;
    }
    if tool.self_ty.is_none() && tool.struct_name().is_none() {
        let derived = crate::ast::upper_camel(&name);
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "#[tool] names the type it writes after the tool, and `{derived}` (from `{name}`) is not a Rust \
                 identifier: name the type with `struct_name = \"...\"`"
            ),
        ));
    }
    if name.eq_ignore_ascii_case(RESERVED_WEB_SEARCH) && !tool.attr.web_search_fallback {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "the name `{name}` is reserved for the providers' native web search: choose another name, or add \
                 `web_search_fallback` to #[tool] and register the tool with \
                 `Toolset::add_web_search(WebSearch::new().with_fallback(...))`"
            ),
        ));
    }
}

fn check_description(cx: &mut Ctxt, tool: &Tool<'_>) {
    match &tool.attr.description {
        Some(description) if description.value.trim().is_empty() => cx.syn_error(syn::Error::new(
            description.span,
            "the description is empty: the model reads it to decide when to call the tool",
        )),
        Some(_) => {}
        None if tool.docs.is_none() && !tool.attr.unknown_key => cx.error_spanned_by(
            &tool.sig.ident,
            "a tool needs a description for the model: add a doc comment (`/// Current temperature for a \
             city.`) or `description = \"...\"` to #[tool]",
        ),
        None => {}
    }
}

fn check_keys(cx: &mut Ctxt, tool: &Tool<'_>) {
    repeated_keys(cx, "tool", &tool.attr.repeated);
    check_examples(cx, tool);
    if tool.self_ty.is_none()
        && let Some(spec) = &tool.attr.spec
    {
        cx.syn_error(syn::Error::new(
            spec.span,
            "`spec` is for the method form (`#[tool] impl MyTool`), whose fields can hold a spec; a free fn's \
             spec is built from the other keys",
        ));
    }
    if tool.self_ty.is_some()
        && let Some(name) = &tool.attr.struct_name
    {
        cx.error_spanned_by(
            name,
            "`struct_name` is for free fns: the method form's tool is the impl's own type",
        );
    }
}

/// Each `example` is a JSON object, as a model's arguments are; whether it
/// fits the schema is checked when the provider definitions are built, where
/// the schema is known.
fn check_examples(cx: &mut Ctxt, tool: &Tool<'_>) {
    const HOW: &str = r##"write the arguments as one JSON object, e.g. `example = r#"{"city": "Paris"}"#`"##;
    for example in &tool.attr.examples {
        match serde_json::from_str::<serde_json::Value>(&example.value()) {
            Ok(serde_json::Value::Object(_)) => {}
            Ok(other) => cx.error_spanned_by(
                example,
                format!("`example` must be a JSON object of arguments, not `{other}`: {HOW}"),
            ),
            Err(error) => cx.error_spanned_by(example, format!("`example` is not JSON ({error}): {HOW}")),
        }
    }
    if tool.attr.spec.is_some()
        && let Some(first) = tool.attr.examples.first()
    {
        cx.error_spanned_by(
            first,
            "`example` is ignored when `spec` gives the spec: add it there with `ToolSpec::with_example`",
        );
    }
}

/// Report each key given a second time, on that second occurrence.
fn repeated_keys(cx: &mut Ctxt, attr: &str, repeated: &[Path]) {
    for path in repeated {
        let key = path_text(path);
        cx.error_spanned_by(
            path,
            format!("duplicate key `{key}` in #[{attr}]: remove the second `{key}`, each key is given once"),
        );
    }
}

/// Report a reference, lifetime or `impl Trait` in a type the request is
/// made of: requests are deserialized into owned values. An output may
/// borrow for `'static` (`&'static str`).
fn borrowed(cx: &mut Ctxt, ty: &Type, what: &str, allow_static: bool) {
    struct Finder<'a>(Option<&'a dyn quote::ToTokens>, bool);
    impl<'ast> Visit<'ast> for Finder<'ast> {
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            if !(self.1 && lifetime.ident == "static") {
                self.0.get_or_insert(lifetime);
            }
        }
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            match &reference.lifetime {
                Some(lifetime) if self.1 && lifetime.ident == "static" => {
                    syn::visit::visit_type(self, &reference.elem)
                }
                _ => {
                    self.0.get_or_insert(reference);
                }
            }
        }
        fn visit_type_impl_trait(&mut self, it: &'ast syn::TypeImplTrait) {
            self.0.get_or_insert(it);
        }
    }
    let mut finder = Finder(None, allow_static);
    finder.visit_type(ty);
    if let Some(found) = finder.0 {
        let message = if allow_static {
            format!(
                "{what} borrows or is `impl Trait`: return a named, owned type (String instead of &str) or a `&'static` one"
            )
        } else {
            format!(
                "{what} borrows or is generic: #[tool] parses requests into owned, concrete types; use owned \
                 types (String instead of &str, Vec<T> instead of &[T])"
            )
        };
        cx.error_spanned_by(found, message);
    }
}
