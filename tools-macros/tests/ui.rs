//! Compile tests of `#[tool]` and `#[derive(ToolOutput)]`, grouped by feature:
//! `tests/ui/<feature>/pass_*.rs` build and run, `fail_*.rs` fail with the
//! exact messages in their `.stderr` files.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/*/pass_*.rs");
    cases.compile_fail("tests/ui/*/fail_*.rs");
}
