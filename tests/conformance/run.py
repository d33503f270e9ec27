#!/usr/bin/env python3
"""The conformance suite: the four clients, plain and streamed, against a
stand-in for each provider that validates every request with the official
SDK's request types and replies with bodies built from its response models.

    python3 -m pip install -r tests/conformance/requirements.txt
    python3 tests/conformance/run.py [path/to/conformance driver]

It starts the stand-in (`standin.py`) on a free port of 127.0.0.1 after its
self-check (a body with an unknown key nested deep in each API's types must
be refused), builds the driver (`tools-agent/examples/conformance.rs`; the
test command's features, so cargo reuses its build) unless given one, runs
it, and then checks on its own side that every case ran and passed and that
no request failed validation. The `long_conversation*` scenarios go on from
300 turns (about 1 MB) under a context policy of 8,000 tokens: each
request is checked for the agent's own estimate of it (which the driver
reports), its size, its first message and every result's call, and what it
keeps of the history. It prints the SDK versions, a table of
scenario x client x plain/streamed (`pass*`: passing but for a check main
does not pass yet, listed under it), and the times; it exits non-zero if
anything failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))


def build_driver() -> str:
    out = subprocess.run(
        ["cargo", "build", "--workspace", "--all-features", "--example", "conformance",
         "--message-format=json", "--quiet"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("target", {}).get("name") == "conformance" \
                and message.get("executable"):
            return message["executable"]
    raise SystemExit("cargo built no `conformance` executable")


def table(cases: list[dict], outcomes: dict[str, dict]) -> str:
    """Scenario rows, a column per client and mode."""
    clients = list(dict.fromkeys(case["client"] for case in cases))
    columns = [(client, mode) for client in clients for mode in ("plain", "streamed")]
    scenarios = list(dict.fromkeys(case["scenario"] for case in cases))
    width = max(len(name) for name in scenarios)
    head = f"| {'scenario'.ljust(width)} | " + " | ".join(f"{c} {m}" for c, m in columns) + " |"
    lines = [head, "| " + "-" * width + " | " + " | ".join("-" * len(f"{c} {m}") for c, m in columns) + " |"]
    for scenario in scenarios:
        cells = []
        for client, mode in columns:
            outcome = outcomes.get(f"{scenario}/{client}/{mode}")
            known = any(case["case"] == f"{scenario}/{client}/{mode}" for case in cases)
            mark = "n/a" if not known else "not run" if outcome is None else "FAIL" if not outcome["ok"] \
                else "pass*" if outcome.get("pending") else "pass"
            cells.append(mark.ljust(len(f"{client} {mode}")))
        lines.append(f"| {scenario.ljust(width)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    began = time.monotonic()
    import standin
    from scenarios import cases

    standin.startup_check()
    server, recorder = standin.start()
    ready = time.monotonic()
    print(f"stand-in at {standin.url(server)}, ready in {ready - began:.1f} s", flush=True)

    if len(sys.argv) > 1:
        driver = sys.argv[1]
    else:
        print("building the driver...", flush=True)
        driver = build_driver()
    built = time.monotonic()

    env = {**os.environ, "CONFORMANCE_URL": standin.url(server)}
    code = subprocess.run([driver], env=env).returncode
    ran = time.monotonic()
    server.shutdown()

    every = cases()
    problems = []
    if code != 0:
        problems.append(f"the driver exited with {code}")
    missing = [case["case"] for case in every if case["case"] not in recorder.outcomes]
    if missing:
        problems.append(f"{len(missing)} cases were not run: {', '.join(missing)}")
    failed = [case for case, outcome in recorder.outcomes.items() if not outcome.get("ok")]
    if failed:
        problems.append(f"{len(failed)} cases failed: {', '.join(failed)}")
    # Checked here too, not only through the driver: no request may have
    # failed the SDK's types, and every case's requests pass the checks.
    for case, problem in recorder.failures:
        problems.append(f"{case}: {problem}")
    pending: dict[str, list[str]] = {}
    for case in every:
        checked = standin.check_case(recorder, case["case"])
        for problem in checked["problems"]:
            problems.append(f"{case['case']}: {problem}")
        for named in checked["pending"]:
            pending.setdefault(named["check"], []).append(case["case"])
    requests = sum(len(r) for r in recorder.requests.values())

    print()
    print(table(every, recorder.outcomes))
    if pending:
        from scenarios import PENDING
        print("\n* passes but for a check main does not pass yet (scenarios.PENDING):")
        for name, where in pending.items():
            print(f"  - {name}: {PENDING[name]}\n    in {len(where)} cases: {', '.join(where)}")
    print()
    print("SDK versions:", ", ".join(f"{name} {version}" for name, version in standin.validate.versions().items()))
    print(f"{len(every)} cases, {requests} requests validated; stand-in start {ready - began:.1f} s, "
          f"driver build {built - ready:.1f} s, run {ran - built:.1f} s")
    passed = sum(1 for case in every if recorder.outcomes.get(case["case"], {}).get("ok"))
    if problems:
        print("\nFAILED:", *problems, sep="\n  ")
    print(f"conformance: {passed} passed, {len(every) - passed} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
