//! Where the generated code finds the SDK: the facade `toolcall`, or
//! `toolcall-core`, under whatever name the user's Cargo.toml gives it.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::Ident;

/// The paths generated code names.
pub(crate) struct Paths {
    /// The crate with the contract's items: `::toolcall`, `::toolcall_core`, or the
    /// user's `crate = "..."`.
    pub krate: TokenStream,
    /// `#krate::__private`: serde, schemars and the std items the code needs.
    pub private: TokenStream,
}

impl Paths {
    /// Resolve the crate: the user's override, else the facade, else
    /// `toolcall-core`, as the user's Cargo.toml names them.
    pub(crate) fn resolve(override_path: Option<&syn::Path>) -> Self {
        let krate = match override_path {
            Some(path) => path.to_token_stream(),
            None => found(),
        };
        let private = quote!(#krate::__private);
        Self { krate, private }
    }

    /// The path of a crate `__private` re-exports, as the string that
    /// `#[serde(crate = "...")]` and `#[schemars(crate = "...")]` take.
    pub(crate) fn private_str(&self, name: &str) -> String {
        format!("{}::__private::{name}", self.krate).replace(' ', "")
    }
}

fn found() -> TokenStream {
    for (package, lib) in [("toolcall", "toolcall"), ("toolcall-core", "toolcall_core")] {
        match crate_name(package) {
            // The facade's own examples, tests and doc tests reach it by name.
            Ok(FoundCrate::Itself) => return absolute(lib),
            Ok(FoundCrate::Name(name)) => return absolute(&name),
            Err(_) => continue,
        }
    }
    absolute("toolcall")
}

fn absolute(name: &str) -> TokenStream {
    let ident = Ident::new(name, Span::call_site());
    quote!(::#ident)
}
