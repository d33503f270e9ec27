#!/usr/bin/env python3
"""The example MCP server against the official Python SDK (pip package `mcp`),
an independent client: over stdio and over streamable HTTP.

    pip install mcp
    python3 tests/python/client.py [path/to/mcp_server]

Without a path it builds the example with cargo first. Exits non-zero on the
first check that fails.
"""

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp import types
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


async def exercise(session: ClientSession, transport: str, asks: bool = False) -> None:
    await session.initialize()

    tools = (await session.list_tools()).tools
    names = [tool.name for tool in tools]
    check(names == ["get_weather", "count_slowly", "cancel_alert", "weather_chart"], f"{transport}: tool names {names}")
    schema = field(tools[0], "input_schema", "inputSchema")
    check(schema["type"] == "object" and schema["required"] == ["city"], f"{transport}: schema {schema}")
    check(schema["properties"]["days"]["maximum"] == 16, f"{transport}: days range {schema}")
    check(field(tools[0], "output_schema", "outputSchema") is not None, f"{transport}: output schema")

    ok = await session.call_tool("get_weather", {"city": "Paris", "days": 3})
    check(not field(ok, "is_error", "isError"), f"{transport}: valid call failed: {text_of(ok)}")
    structured = field(ok, "structured_content", "structuredContent")
    check(structured["days"] == 3 and len(structured["celsius"]) == 3, f"{transport}: structured {structured}")
    check(json.loads(text_of(ok)) == structured, f"{transport}: text and structured content differ")

    chart = await session.call_tool("weather_chart", {"city": "Paris", "days": 5})
    check(not field(chart, "is_error", "isError"), f"{transport}: chart failed: {text_of(chart)}")
    images = [block for block in chart.content if isinstance(block, types.ImageContent)]
    check(len(images) == 1, f"{transport}: chart blocks {[getattr(b, 'type', b) for b in chart.content]}")
    check(field(images[0], "mime_type", "mimeType") == "image/png", f"{transport}: chart type {images[0]}")
    png = base64.b64decode(images[0].data, validate=True)
    check(png.startswith(b"\x89PNG\r\n\x1a\n"), f"{transport}: chart bytes start {png[:8]!r}")
    check(text_of(chart).startswith("Daily temperatures in Paris"), f"{transport}: chart text {text_of(chart)!r}")

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

    if not asks:
        refused = await session.call_tool("cancel_alert", {"city": "Oslo"})
        check(field(refused, "is_error", "isError") is True, f"{transport}: cancel_alert ran unapproved")
        check("does not support MCP elicitation" in text_of(refused), f"{transport}: {text_of(refused)!r}")

    try:
        await session.call_tool("no_such_tool", {})
    except MCPError as error:
        code = getattr(error, "code", None) or getattr(getattr(error, "error", None), "code", None)
        check(code == -32602, f"{transport}: unknown tool code {code}")
    else:
        raise AssertionError(f"{transport}: unknown tool did not raise")
    print(f"python client over {transport}: ok")


class Person:
    """Answers the server's approval questions, and remembers them."""

    def __init__(self, action: str, approve: bool = True):
        self.action, self.approve, self.asked = action, approve, []

    async def __call__(self, context, params):
        self.asked.append(params)
        content = {"approve": self.approve} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)


async def approval(call, person: Person, transport: str) -> None:
    """`cancel_alert` needs approval: it runs on a ticked yes, and only then."""
    result = await call("cancel_alert", {"city": "Oslo"})
    asked = person.asked[-1] if person.asked else None
    check(asked is not None, f"{transport}: the server did not ask")
    check("cancel_alert" in asked.message and '"Oslo"' in asked.message, f"{transport}: asked {asked.message!r}")
    schema = field(asked, "requested_schema", "requestedSchema")
    schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
    check(schema["required"] == ["approve"], f"{transport}: form {schema}")
    if person.action == "accept" and person.approve:
        check(not field(result, "is_error", "isError"), f"{transport}: approved call failed: {text_of(result)}")
        check(text_of(result) == "cancelled the alert for Oslo", f"{transport}: {text_of(result)!r}")
    else:
        check(field(result, "is_error", "isError") is True, f"{transport}: {person.action} ran the call")
        check("did not run" in text_of(result), f"{transport}: {text_of(result)!r}")
    print(f"python client over {transport}: approval {person.action} (approve={person.approve}) ok")


class Cutter:
    """A TCP relay to the server that cuts the first connection on which a
    progress report comes back, right after relaying it: a call's event
    stream lost mid-call, as a flaky network loses it."""

    def __init__(self, upstream: str):
        self.host, port = upstream.removeprefix("http://").split("/", 1)[0].rsplit(":", 1)
        self.port, self.armed, self.cuts = int(port), True, 0

    async def start(self) -> int:
        self.server = await asyncio.start_server(self.relay, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def relay(self, client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(self.host, self.port)

        async def pipe(reader, writer, watch):
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
                    if watch and self.armed and b'"notifications/progress"' in data:
                        self.armed, self.cuts = False, self.cuts + 1
                        break
            except ConnectionError:
                pass
            for w in (client_writer, server_writer):
                w.close()

        await asyncio.gather(pipe(client_reader, server_writer, False), pipe(server_reader, client_writer, True))


async def resumption(url: str, http) -> None:
    """A call whose event stream is cut after its first progress report: the
    SDK reconnects with `Last-Event-ID` after the server's retry delay (3 s)
    and gets the rest, each report once. Counting to 6 by 1 s steps, the
    call still runs then; to 3 by 0.3 s steps, it has answered, and its
    events are replayed."""
    for to, step_ms, when in [(6, 1000, "while the call runs"), (3, 300, "after the call answered")]:
        cutter = Cutter(url)
        port = await cutter.start()
        path = "/" + url.removeprefix("http://").split("/", 1)[1]
        async with streamable_http_client(f"http://127.0.0.1:{port}{path}", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                progress = []

                async def on_progress(done, total, message):
                    progress.append((done, total))

                counted = await asyncio.wait_for(
                    session.call_tool("count_slowly", {"to": to, "step_ms": step_ms}, progress_callback=on_progress),
                    20,
                )
                check(cutter.cuts == 1, f"resumption {when}: the stream was not cut")
                check(text_of(counted) == f"counted to {to}", f"resumption {when}: result {text_of(counted)!r}")
                check(progress == [(n, to) for n in range(1, to + 1)], f"resumption {when}: progress {progress}")
        cutter.server.close()
        print(f"python client over streamable HTTP: a cut stream resumed {when}, each event once")


async def over_stdio(binary: str) -> None:
    params = StdioServerParameters(command=binary, args=[])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")
    # MCP 2025-11-25: the server sends `elicitation/create` to the client.
    for person in [Person("accept"), Person("accept", approve=False), Person("decline"), Person("cancel")]:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=person) as session:
                await session.initialize()
                await approval(session.call_tool, person, "stdio (2025-11-25)")
    # MCP 2026-07-28: the server answers input_required; the client asks and calls again.
    for person in [Person("accept"), Person("decline")]:
        async with Client(params, mode="2026-07-28", elicitation_callback=person) as client:
            await approval(client.call_tool, person, "stdio (2026-07-28)")


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
            await resumption(url, http)
            for person in [Person("accept"), Person("decline")]:
                async with streamable_http_client(url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1], elicitation_callback=person) as session:
                        await session.initialize()
                        await approval(session.call_tool, person, "streamable HTTP")
        # SIGTERM (what systemd and container runtimes send) stops it as
        # gracefully as Ctrl-C: a clean exit, not death by the signal (-15).
        server.terminate()
        code = await asyncio.wait_for(server.wait(), 30)
        check(code == 0, f"exit status after SIGTERM: {code}")
        print("python client over streamable HTTP: SIGTERM exits cleanly")
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()


async def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MCP_SERVER") or build_server()
    await asyncio.wait_for(over_stdio(binary), 60)
    await asyncio.wait_for(over_http(binary), 60)


if __name__ == "__main__":
    asyncio.run(main())
