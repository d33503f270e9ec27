#!/usr/bin/env python3
"""The example MCP server against the official Python SDK (pip package `mcp`),
an independent client: over stdio and over streamable HTTP.

    pip install mcp
    python3 tests/python/client.py [path/to/mcp_server]

Without a path it builds the example with cargo first. Exits non-zero on the
first check that fails.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "python-test-token"


def field(obj, snake, camel):
    """The SDK's models have used both spellings; accept either."""
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def build_server() -> str:
    # The test command's selection and features, so cargo reuses its build.
    out = subprocess.run(
        ["cargo", "build", "--workspace", "--all-features", "--example", "mcp_server",
         "--message-format=json", "--quiet"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "mcp_server" and msg.get("executable"):
            return msg["executable"]
    raise SystemExit("cargo did not report the example's executable")


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def exercise(session: ClientSession, transport: str) -> None:
    await session.initialize()

    tools = (await session.list_tools()).tools
    names = [tool.name for tool in tools]
    check(names == ["get_weather", "count_slowly"], f"{transport}: tool names {names}")
    schema = field(tools[0], "input_schema", "inputSchema")
    check(schema["type"] == "object" and schema["required"] == ["city"], f"{transport}: schema {schema}")
    check(schema["properties"]["days"]["maximum"] == 16, f"{transport}: days range {schema}")
    check(field(tools[0], "output_schema", "outputSchema") is not None, f"{transport}: output schema")

    ok = await session.call_tool("get_weather", {"city": "Paris", "days": 3})
    check(not field(ok, "is_error", "isError"), f"{transport}: valid call failed: {text_of(ok)}")
    structured = field(ok, "structured_content", "structuredContent")
    check(structured["days"] == 3 and len(structured["celsius"]) == 3, f"{transport}: structured {structured}")
    check(json.loads(text_of(ok)) == structured, f"{transport}: text and structured content differ")

    fenced = await session.call_tool("get_weather", {"city": "Paris", "days": 17})
    check(field(fenced, "is_error", "isError") is True, f"{transport}: days=17 accepted")
    check("`days` must be at most 16" in text_of(fenced), f"{transport}: range message {text_of(fenced)!r}")

    wrong = await session.call_tool("get_weather", {"city": "Paris", "days": "three"})
    check(field(wrong, "is_error", "isError") is True, f"{transport}: days='three' accepted")
    check("at `days`: invalid type" in text_of(wrong), f"{transport}: type message {text_of(wrong)!r}")

    missing = await session.call_tool("get_weather", {})
    check(field(missing, "is_error", "isError") is True and "city" in text_of(missing), f"{transport}: missing city")

    progress = []

    async def on_progress(done, total, message):
        progress.append((done, total))

    counted = await session.call_tool("count_slowly", {"to": 3}, progress_callback=on_progress)
    check(text_of(counted) == "counted to 3", f"{transport}: count result {text_of(counted)!r}")
    check(progress == [(1, 3), (2, 3), (3, 3)], f"{transport}: progress {progress}")

    try:
        await session.call_tool("no_such_tool", {})
    except MCPError as error:
        code = getattr(error, "code", None) or getattr(getattr(error, "error", None), "code", None)
        check(code == -32602, f"{transport}: unknown tool code {code}")
    else:
        raise AssertionError(f"{transport}: unknown tool did not raise")
    print(f"python client over {transport}: ok")


async def over_stdio(binary: str) -> None:
    params = StdioServerParameters(command=binary, args=[])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")


async def over_http(binary: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TAVILY_API_KEY"}
    server = await asyncio.create_subprocess_exec(
        binary, "--http", "127.0.0.1:0", "--token", TOKEN, stderr=asyncio.subprocess.PIPE, env=env
    )
    try:
        # The server may first say that Tavily is off.
        line = ""
        for _ in range(5):
            line = (await asyncio.wait_for(server.stderr.readline(), 30)).decode()
            if line.startswith("listening on "):
                break
        check(line.startswith("listening on "), f"server said {line!r}")
        url = line.removeprefix("listening on ").strip()
        async with httpx2.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                       headers={"Accept": "application/json, text/event-stream"})
            check(refused.status_code == 401, f"no token: status {refused.status_code}")
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await exercise(session, "streamable HTTP")
    finally:
        server.terminate()
        await server.wait()


async def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MCP_SERVER") or build_server()
    await asyncio.wait_for(over_stdio(binary), 60)
    await asyncio.wait_for(over_http(binary), 60)


if __name__ == "__main__":
    asyncio.run(main())
