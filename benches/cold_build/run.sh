#!/usr/bin/env bash
# Cold builds of an app on the SDK, against the same app on rig, side by side.
#
#   bash benches/cold_build/run.sh                 # every variant, once
#   ROUNDS=2 bash benches/cold_build/run.sh        # twice, interleaved
#   VARIANTS="rig-agent toolcall-agent" bash benches/cold_build/run.sh
#   LABEL=after bash benches/cold_build/run.sh     # the table's title
#   REV=HEAD bash benches/cold_build/run.sh        # the SDK as committed
#
# The apps (apps/toolcall, apps/rig) are one #[tool] weather lookup and, with
# their feature `agent`, one agent run on OpenAI Chat Completions; each is a
# workspace of its own with its Cargo.lock kept in git, so a re-run builds the
# same versions (cargo updates a lock only for what a changed manifest needs).
# The variants:
#
#   toolcall-default  the facade with its default features (the core)
#   toolcall-agent    the facade with `agent`
#   toolcall-all      the facade with every feature
#   rig-core          rig-core 0.44 with its default features (the tool)
#   rig-agent         rig-core 0.44 with `reqwest`, and rig-agent 0.44
#
# Each variant is built once a round with `cargo build` (the dev profile, the
# usual edit-build cycle) in a fresh CARGO_TARGET_DIR under /tmp, deleted
# after; the downloads are done first (`cargo fetch`, the shared CARGO_HOME),
# so the time is compiling alone. The variants of a round run one after the
# other, rounds interleaved, so every variant sees the same machine. Per
# variant: its dependency count (unique packages of `cargo tree -e normal`,
# and of `-e normal,build`), the crates compiled, the wall seconds and the
# CPU seconds (user + sys of cargo and the compilers it ran), the load
# before and after, and the 15 crates with the most compile time
# (`--timings`) with the SDK crates that pull each. Reports, logs and the
# table land in target/cold-build/<time>/ (OUT= to choose).
#
# The SDK built is the working tree, or with REV=<commit> that commit
# (exported with `git archive` to /tmp, the apps copied beside it), so a
# "before" is not touched by edits under way.
#
# The machine is shared: run it under `nice -n 10` when others build, and
# compare the CPU seconds; the wall seconds follow the load (printed beside).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds="${ROUNDS:-1}"
variants="${VARIANTS:-rig-core toolcall-default rig-agent toolcall-agent toolcall-all}"
label="${LABEL:-this run}"
out="${OUT:-$root/target/cold-build/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
# A compiler cache would make a cold build warm.
unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER

scratch=""
src=""
trap 'rm -rf $scratch $src' EXIT
if [ -n "${REV:-}" ]; then
  commit="$(git -C "$root" rev-parse --short "$REV")"
  src="$(mktemp -d /tmp/cold-build-src.XXXXXX)"
  git -C "$root" archive "$commit" | tar -x -C "$src"
  rm -rf "$src/benches/cold_build/apps"
  mkdir -p "$src/benches/cold_build"
  cp -r "$here/apps" "$src/benches/cold_build/apps"
  rm -rf "$src"/benches/cold_build/apps/*/target
  apps="$src/benches/cold_build/apps"
else
  commit="$(git -C "$root" rev-parse --short HEAD)"
  git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit with uncommitted changes (the working tree)"
  apps="$here/apps"
fi

app() {
  case "$1" in
    toolcall-*) echo "$apps/toolcall" ;;
    rig-*) echo "$apps/rig" ;;
    *) echo "unknown variant $1" >&2; exit 2 ;;
  esac
}
features() { # the app's own feature for a variant, none for the default
  case "$1" in
    *-agent) echo agent ;;
    *-all) echo all ;;
    *) echo "" ;;
  esac
}
baseline() { # the rig variant a variant is compared with
  case "$1" in
    *-default | rig-core) echo rig-core ;;
    *) echo rig-agent ;;
  esac
}
feature_args() { local f; f="$(features "$1")"; if [ -n "$f" ]; then echo "--features $f"; fi; }
load() { uptime | sed -E 's/.*load average: //'; }

# Unique packages (name and version) in the app's graph, the app left out.
deps() { # variant, edge kinds
  # shellcheck disable=SC2046
  cargo tree --manifest-path "$(app "$1")/Cargo.toml" $(feature_args "$1") -e "$2" --prefix none \
    | sed -E 's/ \([^)]*\)//g' | grep -v -e '^cold-build-' -e '^\[' -e '^$' | sort -u | wc -l
}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "SDK: $commit"
  echo "machine: $(nproc) cores, $(uname -sr); $(rustc --version); $(cargo --version)"
  echo "variants: $variants; rounds: $rounds"
  echo "load before: $(load)"
} | tee "$out/header.txt"

for dir in "$apps/toolcall" "$apps/rig"; do
  cargo fetch --manifest-path "$dir/Cargo.toml" --quiet
done

printf 'variant\tround\tdeps\tdeps_build\tcompiled\tseconds\tcpu\trc\tload_before\tload_after\n' > "$out/runs.tsv"
for variant in $variants; do
  printf '%s\t%s\t%s\n' "$variant" "$(deps "$variant" normal)" "$(deps "$variant" normal,build)"
done > "$out/deps.tsv"

for round in $(seq 1 "$rounds"); do
  for variant in $variants; do
    scratch="$(mktemp -d /tmp/cold-build.XXXXXX)"
    before="$(load)"
    echo "== round $round: $variant (load $before)"
    rc=0
    # Wall seconds, and the CPU seconds (user + sys) of cargo and all it
    # ran: the wall time grows with what else the machine runs, the CPU
    # time much less.
    TIMEFORMAT='%R %U %S'
    # shellcheck disable=SC2046
    { time CARGO_TARGET_DIR="$scratch" cargo build --manifest-path "$(app "$variant")/Cargo.toml" \
      $(feature_args "$variant") --timings > "$out/$variant.$round.log" 2>&1; } 2> "$scratch/time" || rc=$?
    read -r seconds user sys < "$scratch/time"
    cpu="$(echo "$user + $sys" | bc)"
    after="$(load)"
    compiled="$(grep -c '^ *Compiling ' "$out/$variant.$round.log" || true)"
    read -r _ d db < <(grep "^$variant	" "$out/deps.tsv" | tr '\t' ' ')
    printf '%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\n' "$variant" "$round" "$d" "$db" "$compiled" \
      "$seconds" "$cpu" "$rc" "$before" "$after" >> "$out/runs.tsv"
    printf '   %.1f s wall, %.1f s CPU, %s crates compiled, rc %s (load after %s)\n' "$seconds" "$cpu" "$compiled" "$rc" "$after"
    if [ "$rc" != 0 ]; then tail -20 "$out/$variant.$round.log"; fi
    report="$scratch/cargo-timings/cargo-timing.html"
    if [ -f "$report" ]; then
      cp "$report" "$out/$variant.$round.timings.html"
      # The heaviest crates, and which of the SDK's crates pull each.
      python3 "$here/timings.py" "$report" 15 | while IFS= read -r line; do
        crate="$(echo "$line" | awk 'NF >= 3 && $1 ~ /^[0-9.]+$/ { print $2 "@" $3 }')"
        via=""
        if [ -n "$crate" ] && [[ "$variant" == toolcall-* ]] && [[ "$crate" != toolcall* ]] && [[ "$crate" != cold-build* ]]; then
          # shellcheck disable=SC2046
          via="$(cargo tree --manifest-path "$(app "$variant")/Cargo.toml" $(feature_args "$variant") \
            -e normal,build -i "$crate" --prefix depth 2>/dev/null \
            | awk -f "$here/via.awk" | sort | tr '\n' ' ' || true)"
          [ -n "$via" ] && via="  <- ${via% }"
        fi
        echo "$line$via"
      done > "$out/$variant.$round.top.txt"
    fi
    rm -rf "$scratch"
    scratch=""
  done
done
echo "load after: $(load)" | tee -a "$out/header.txt"

# The table: the fastest round of each variant (wall; CPU the least of the
# rounds), against its rig baseline (rig-core for the default, rig-agent for
# the others).
python3 - "$out/runs.tsv" "$label" "$variants" > "$out/table.md" <<'PY'
import csv, sys
path, label, variants = sys.argv[1], sys.argv[2], sys.argv[3].split()
rows = list(csv.DictReader(open(path), delimiter="\t"))
best = {}
for row in rows:
    if row["rc"] != "0":
        continue
    v = row["variant"]
    if v not in best or float(row["seconds"]) < float(best[v]["seconds"]):
        best[v] = row
def base(v):
    return "rig-core" if v.endswith("-default") or v == "rig-core" else "rig-agent"
print(f"| {label} | deps (normal) | deps (normal+build) | crates compiled | cold `cargo build`, wall | vs rig | CPU (user+sys) | vs rig |")
print("|---|---|---|---|---|---|---|---|")
for v in variants:
    if v not in best:
        print(f"| {v} | | | | failed | | | |")
        continue
    row, b = best[v], best.get(base(v))
    ratio = f"{float(row['seconds']) / float(b['seconds']):.2f}x" if b else ""
    times = [r["seconds"] for r in rows if r["variant"] == v and r["rc"] == "0"]
    shown = row["seconds"] + " s" + (f" (of {', '.join(times)})" if len(times) > 1 else "")
    cpu = min(float(r["cpu"]) for r in rows if r["variant"] == v and r["rc"] == "0")
    bcpu = min((float(r["cpu"]) for r in rows if r["variant"] == base(v) and r["rc"] == "0"), default=None)
    cratio = f"{cpu / bcpu:.2f}x" if bcpu else ""
    print(f"| {v} | {row['deps']} | {row['deps_build']} | {row['compiled']} | {shown} | {ratio} | {cpu:.1f} s | {cratio} |")
PY
{
  echo
  echo "SDK $commit; $(sed -n 's/^date: //p' "$out/header.txt"); $(nproc) cores; load (1, 5, 15 min)" \
    "$(sed -n 's/^load before: //p' "$out/header.txt") before, $(sed -n 's/^load after: //p' "$out/header.txt") after."
} >> "$out/table.md"
echo
cat "$out/table.md"
echo
for f in "$out"/*.1.top.txt; do
  [ -f "$f" ] || continue
  echo "-- $(basename "$f" .1.top.txt): the heaviest crates (round 1)"
  cat "$f"
done
echo
echo "everything in $out"
