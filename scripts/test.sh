#!/usr/bin/env bash
# The whole test command: formatting, lints, then every test (doc tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
# One feature set for lints and tests, so every dependency is built once.
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo test --workspace --all-features
