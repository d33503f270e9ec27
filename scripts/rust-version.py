#!/usr/bin/env python3
"""Checks that each published crate's rust-version is true: at least the
newest rust-version its dependencies declare (normal and build, every
feature on). Cargo refuses a crate whose rust-version is newer than the
toolchain, so a number lower than a dependency's would promise builds that
cannot happen."""
import json
import subprocess
import sys

meta = json.loads(subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--all-features"],
    check=True, capture_output=True, text=True).stdout)
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}


def version(text):
    parts = [int(x) for x in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


failed = False
for member in meta["workspace_members"]:
    crate = packages[member]
    if crate.get("publish") == []:
        continue
    seen, stack = set(), [member]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack += [d["pkg"] for d in nodes[node]["deps"]
                  if any(k["kind"] in (None, "build") for k in d["dep_kinds"])]
    needed = max((version(packages[d]["rust_version"]), packages[d]["name"])
                 for d in seen - {member} if packages[d].get("rust_version"))
    declared = crate.get("rust_version")
    if declared is None or version(declared) < needed[0]:
        failed = True
        print(f"{crate['name']}: rust-version {declared}, but {needed[1]} needs "
              f"{'.'.join(map(str, needed[0]))}", file=sys.stderr)
sys.exit(1 if failed else 0)
