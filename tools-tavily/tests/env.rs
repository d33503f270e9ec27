//! `Tavily::new` reads `TAVILY_API_KEY`. This binary holds one test only,
//! because it changes the process environment.

use toolcall_tavily::{API_KEY_VAR, Tavily, TavilyError};

#[test]
fn new_reads_the_key_from_the_environment() {
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { std::env::remove_var(API_KEY_VAR) };
    let error = Tavily::new().unwrap_err();
    assert!(matches!(error, TavilyError::MissingApiKey { var: "TAVILY_API_KEY" }));
    assert!(error.to_string().starts_with("TAVILY_API_KEY is not set"), "{error}");

    unsafe { std::env::set_var(API_KEY_VAR, "   ") };
    assert!(matches!(Tavily::new(), Err(TavilyError::MissingApiKey { .. })));

    unsafe { std::env::set_var(API_KEY_VAR, " tvly-from-env \n") };
    let tavily = Tavily::new().unwrap();
    assert!(!format!("{tavily:?}").contains("tvly-from-env"));
}
