#!/usr/bin/env bash
# Compile time of 50 tools written three ways, each a crate of its own:
# with #[tool], by hand on the typed layer (TypedTool), and as rmcp #[tool]
# methods of one #[tool_router]. Dependencies are built once; then each crate
# is rebuilt alone after a touch, three times, and the fastest time counts.
# Run by hand (not in CI): ./benches/compile_time/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/target/compile-time"
n=50
mkdir -p "$work"
cp "$root/Cargo.lock" "$work/Cargo.lock"
cat > "$work/Cargo.toml" <<TOML
[workspace]
members = ["with_macro", "by_hand", "rmcp_macros"]
resolver = "3"

[workspace.dependencies]
toolcall = { path = "$root" }
rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros"] }
schemars = "1.2"
serde = { version = "1", features = ["derive"] }
TOML

request() { # the request type of tool $1, the same in every crate
  cat <<RUST
/// Arguments of tool $1.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Req$1 {
    /// City name.
    pub city: String,
    /// Days ahead.
    pub days: Option<u8>,
}
RUST
}

crate() { # name, then the source on stdin
  mkdir -p "$work/$1/src"
  printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\ntoolcall.workspace = true\nrmcp.workspace = true\nschemars.workspace = true\nserde.workspace = true\n' "$1" > "$work/$1/Cargo.toml"
  cat > "$work/$1/src/lib.rs"
}

for i in $(seq 1 $n); do
  request "$i"
  cat <<RUST
/// Tool $i.
#[toolcall::tool]
pub async fn tool_$i(req: Req$i) -> String {
    format!("{} {:?}", req.city, req.days)
}
RUST
done | crate with_macro

for i in $(seq 1 $n); do
  request "$i"
  cat <<RUST
/// Tool $i.
pub struct Tool$i;
impl toolcall::TypedTool for Tool$i {
    type Request = Req$i;
    type Output = String;
    type Error = toolcall::ToolError;
    fn spec(&self) -> &toolcall::ToolSpec {
        static SPEC: std::sync::LazyLock<toolcall::ToolSpec> =
            std::sync::LazyLock::new(|| toolcall::ToolSpec::new::<Req$i>("tool_$i", "Tool $i."));
        &SPEC
    }
    async fn run(&self, _ctx: &toolcall::ToolContext, req: Req$i) -> Result<String, toolcall::ToolError> {
        Ok(format!("{} {:?}", req.city, req.days))
    }
}
RUST
done | crate by_hand

{
  for i in $(seq 1 $n); do request "$i"; done
  echo '/// The server.'
  echo '#[derive(Clone)]'
  echo 'pub struct Server;'
  echo '#[rmcp::tool_router]'
  echo 'impl Server {'
  for i in $(seq 1 $n); do
    cat <<RUST
    #[rmcp::tool(description = "Tool $i.")]
    async fn tool_$i(&self, rmcp::handler::server::wrapper::Parameters(req): rmcp::handler::server::wrapper::Parameters<Req$i>) -> String {
        format!("{} {:?}", req.city, req.days)
    }
RUST
  done
  echo '}'
  echo '#[rmcp::tool_handler]'
  echo 'impl rmcp::ServerHandler for Server {}'
} | crate rmcp_macros

cd "$work"
export CARGO_TARGET_DIR="$work/target" CARGO_INCREMENTAL=0
cargo build --quiet --workspace   # dependencies, once
declare -A best
for name in with_macro by_hand rmcp_macros; do
  best[$name]=999999
  for _ in 1 2 3; do
    touch "$name/src/lib.rs"
    start=$(date +%s%N)
    cargo build --quiet -p "$name"
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    (( ms < best[$name] )) && best[$name]=$ms
  done
done
echo "$n tools, rebuild of the crate alone (fastest of 3), dev profile:"
for name in with_macro by_hand rmcp_macros; do
  awk -v n="$name" -v ms="${best[$name]}" -v hand="${best[by_hand]}" \
    'BEGIN { printf "  %-12s %6d ms  %.2fx by hand\n", n, ms, ms / hand }'
done
