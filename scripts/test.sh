#!/usr/bin/env bash
# The whole test command: formatting, lints, then every test (doc tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
# Default features: the trybuild .stderr files pin rustc's messages, which name
# trait paths by what the enabled features make visible.
cargo test --workspace
# The MCP bridge (feature `mcp`): its unit and doc tests, and the real-client tests.
cargo test -p tools-core --features mcp
cargo test -p tools --features mcp --test mcp
