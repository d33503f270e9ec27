//! Errors collected with their spans, reported together (serde_derive's
//! `Ctxt` habit): one run of the macro shows every mistake at once.

use std::fmt::Display;

use quote::ToTokens;

/// The errors found so far.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Record an error spanned on `tokens`.
    pub fn error_spanned_by<T: ToTokens>(&mut self, tokens: T, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Record an error from syn.
    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All errors as one, or `Ok` if there were none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
