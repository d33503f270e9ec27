#!/usr/bin/env bash
# The whole test command: formatting, lints, the API docs, then every test (doc tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
# One feature set for lints and tests, so every dependency is built once.
cargo clippy --workspace --all-targets --all-features -- -D warnings
# The API docs: no rustdoc warning, every intra-doc link resolved.
RUSTDOCFLAGS="-D warnings -D rustdoc::broken_intra_doc_links" cargo doc --workspace --all-features --no-deps
cargo test --workspace --all-features
