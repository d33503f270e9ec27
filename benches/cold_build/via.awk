# Used by run.sh.
# Lines of `cargo tree -i X --prefix depth`: the SDK crates nearest to X on
# each path (the ones whose own dependency brings it in).
{
  match($0, /^[0-9]+/); d = substr($0, 1, RLENGTH) + 0; name = substr($0, RLENGTH + 1); sub(/ .*/, "", name)
  our[d] = (name ~ /^toolcall/) ? 1 : 0
  if (our[d]) { seen = 0; for (i = 0; i < d; i++) if (our[i]) seen = 1; if (!seen) hit[name] = 1 }
}
END { for (n in hit) print n }
