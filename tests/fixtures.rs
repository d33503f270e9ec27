//! The generated paths resolve however the user depends on the SDK: the
//! facade only, `tools-core` with `tools-macros`, or the facade renamed.
//! Each fixture under tests/fixtures/ is checked with clippy -D warnings and
//! `#![deny(missing_docs)]`; its tests run the tools.

use std::path::Path;
use std::process::Command;

#[test]
fn fixtures_build_and_pass_their_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("tests/fixtures/Cargo.toml");
    // A target dir of their own: the outer cargo holds the lock on ours.
    let target = root.join("target/fixtures");
    let cargo = env!("CARGO");
    for (command, args) in [
        ("clippy", &["--offline", "--workspace", "--all-targets", "--", "-D", "warnings"][..]),
        ("test", &["--offline", "--workspace", "--quiet"][..]),
    ] {
        let output = Command::new(cargo)
            .arg(command)
            .arg("--manifest-path")
            .arg(&manifest)
            .args(args)
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTFLAGS")
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "cargo {command} {} failed:\n{}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
