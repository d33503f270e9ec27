//! `#[derive(ToolOutput)]`: compact JSON of a `Serialize` type, or its
//! `Display` text with `#[tool_output(display)]`. The impl is
//! `#[automatically_derived]`, as any derive's, so lints treat it as generated.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::DeriveInput;

use crate::attr::{OutputAttr, parse_output_attr};
use crate::ctxt::Ctxt;
use crate::krate::Paths;
use crate::valid;

/// Expand the derive.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut cx = Ctxt::default();
    let mut attr = OutputAttr::default();
    for a in input.attrs.iter().filter(|a| a.path().is_ident("tool_output")) {
        parse_output_attr(&mut cx, a, &mut attr);
    }
    valid::check_output(&mut cx, &attr);
    let paths = Paths::resolve(attr.krate.as_ref());
    let (krate, private) = (&paths.krate, &paths.private);
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    // On `Self`, so a generic type needs its parameters to be only as
    // serializable as it is itself.
    let bound: syn::WherePredicate = if attr.display {
        syn::parse_quote!(Self: #private::fmt::Display)
    } else {
        syn::parse_quote!(Self: #private::serde::Serialize)
    };
    if !generics.params.is_empty() {
        generics.make_where_clause().predicates.push(bound);
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    // Spanned on the type, so a missing Serialize or Display lands there.
    let body = if attr.display {
        quote_spanned!(ident.span()=> #private::Result::Ok(#private::ToString::to_string(&self)))
    } else {
        quote_spanned!(ident.span()=> #private::to_json_content(&self))
    };
    let errors = match cx.check() {
        Ok(()) => TokenStream::new(),
        Err(error) => error.to_compile_error(),
    };
    quote! {
        #errors
        #[automatically_derived]
        impl #impl_generics #krate::ToolOutput for #ident #ty_generics #where_clause {
            fn into_content(self) -> #private::Result<#private::String, #krate::ToolError> {
                #body
            }
        }
    }
}
