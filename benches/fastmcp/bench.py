#!/usr/bin/env python3
"""tools/call round trips per second over stdio, with the official Python
SDK's client, against two servers of the same get_weather tool: this SDK's
example (examples/mcp_server.rs) and the Python SDK's own MCPServer
(server.py). Run by hand, not in CI:

    pip install "mcp==2.3.0" && python3 benches/fastmcp/bench.py [CALLS]
"""
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
WARM_UP = 100


def example_binary() -> str:
    out = subprocess.run(
        ["cargo", "build", "--release", "--features", "mcp", "--example", "mcp_server", "--message-format=json", "--quiet"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "mcp_server" and msg.get("executable"):
            return msg["executable"]
    raise SystemExit("cargo did not report the example's executable")


async def rate(params: StdioServerParameters, calls: int) -> float:
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            arguments = {"city": "Paris", "days": 3}
            for _ in range(WARM_UP):
                await session.call_tool("get_weather", arguments)
            result = await session.call_tool("get_weather", arguments)
            if result.isError if hasattr(result, "isError") else result.is_error:
                raise SystemExit(f"{params.command}: the call failed: {result}")
            start = time.perf_counter()
            for _ in range(calls):
                await session.call_tool("get_weather", arguments)
            return calls / (time.perf_counter() - start)


async def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    env = {k: v for k, v in os.environ.items() if k != "TAVILY_API_KEY"}
    ours = await rate(StdioServerParameters(command=example_binary(), args=[], env=env), calls)
    python = await rate(StdioServerParameters(command=sys.executable, args=[str(Path(__file__).with_name("server.py"))]), calls)
    print(f"{calls} sequential calls of get_weather over stdio, Python SDK client:")
    print(f"  this SDK (examples/mcp_server, release)  {ours:8.0f} calls/s")
    print(f"  Python SDK MCPServer (server.py)         {python:8.0f} calls/s")
    print(f"  ratio {ours / python:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
