#!/usr/bin/env bash
# The whole test command: formatting, lints, the API docs, then every test (doc tests too).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
# The Restate server the tools-restate tests start (npm, pinned by its
# lockfile), installed once.
if [ ! -x tests/restate/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server ]; then
    npm ci --prefix tests/restate --ignore-scripts --no-audit --no-fund --silent
fi
# One feature set for lints and tests, so every dependency is built once.
cargo clippy --workspace --all-targets --all-features -- -D warnings
# The loop without the HTTP clients, as toolcall-ui, -restate and -session
# build it: no code left that only the clients use.
cargo clippy -p toolcall-agent --no-default-features -- -D warnings
# Publishable: each crate's rust-version no older than its dependencies
# need, and each crate packaged and built from its package alone (the
# workspace's crates reach each other through a local registry of the
# packages, as they would through crates.io).
python3 scripts/rust-version.py
# Cargo extracts a local registry's packages once per registry path and does
# not extract them again when a package's content changes, so a second run
# would build against the first run's sources: clear our extracted packages.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/toolcall-*
# And cargo keeps what it built from a registry package by its version, not
# its content: forget the builds of ours, so they are built from the new.
target="${CARGO_TARGET_DIR:-target}"
for dep in "$target"/debug/deps/toolcall_*.d; do
  if grep -q '/registry/src/' "$dep" 2>/dev/null; then
    hash="${dep##*-}"
    rm -rf "$target"/debug/.fingerprint/*-"${hash%.d}"
  fi
done
cargo package --workspace --exclude 'fixture-*' --allow-dirty --quiet
# The API docs: no rustdoc warning, every intra-doc link resolved.
RUSTDOCFLAGS="-D warnings -D rustdoc::broken_intra_doc_links" cargo doc --workspace --all-features --no-deps
cargo test --workspace --all-features
# And with the default features, what a user who turns none on builds: the
# lints and the doc tests (a guide snippet that needs a feature says so).
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --doc
# The tests that need a server are #[ignore]d (so `cargo test` alone passes
# on a bare machine); the Restate server is installed above, so run them.
# (Postgres and the OpenAI-compatible server: .ci/run starts them and runs theirs.)
cargo test -p toolcall-restate --all-features --test it -- --ignored
