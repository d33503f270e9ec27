//! Errors collected with their spans, reported together (serde_derive's
//! `Ctxt` habit): one run of the macro shows every mistake at once.

use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// The errors found so far. It must be consumed by [`Ctxt::check`]: one
/// dropped unchecked panics, as serde_derive's does, because the errors it
/// holds would otherwise never reach the user and the macro would expand a
/// wrong input as if it were right.
pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: Option<Vec<syn::Error>>,
}

impl Default for Ctxt {
    fn default() -> Self {
        Self { errors: Some(Vec::new()) }
    }
}

impl Ctxt {
    /// Record an error spanned on `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens>(&mut self, tokens: T, message: impl Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Record an error from syn.
    pub(crate) fn syn_error(&mut self, error: syn::Error) {
        // `check` takes `self`, so no error can be recorded after it.
        if let Some(errors) = &mut self.errors {
            errors.push(error);
        }
    }

    /// All errors as one, or `Ok` if there were none.
    pub(crate) fn check(mut self) -> syn::Result<()> {
        let mut errors = self.errors.take().unwrap_or_default().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // While unwinding from another panic, a second one would abort and
        // hide the first.
        if self.errors.is_some() && !thread::panicking() {
            panic!("tools-macros bug: a Ctxt was dropped without `check()`, its errors would be lost");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_reports_every_error_in_order() {
        let mut cx = Ctxt::default();
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.error_spanned_by(quote::quote!(b), "second");
        let messages: Vec<String> = cx.check().unwrap_err().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
        assert!(Ctxt::default().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "dropped without `check()`")]
    fn dropped_unchecked_panics() {
        let mut cx = Ctxt::default();
        cx.error_spanned_by(quote::quote!(a), "lost");
        drop(cx);
    }

    #[test]
    #[should_panic(expected = "dropped without `check()`")]
    fn dropped_unchecked_panics_without_errors() {
        drop(Ctxt::default());
    }
}
