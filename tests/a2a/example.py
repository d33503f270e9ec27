"""One of this repository's examples, running while a test talks to it:
cargo builds and starts it, and the first line it prints is its URL."""

import contextlib
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@contextlib.contextmanager
def running(*cargo_args):
    """The URL of the example `cargo run --quiet *cargo_args` serves at,
    until the block ends and the example is killed."""
    server = subprocess.Popen(["cargo", "run", "--quiet", *cargo_args], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://"), f"the example printed {url!r}"
        yield url
    finally:
        server.kill()
        server.wait()
