#!/usr/bin/env python3
"""A stand-in for the four model APIs, on 127.0.0.1 (a free port): OpenAI
Chat Completions (`/v1/chat/completions`) and Responses (`/v1/responses`),
Anthropic Messages (`/v1/messages`) and Gemini
(`/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`),
plain JSON and server-sent events.

Each case of the suite (a scenario, a client, plain or streamed) has its own
path prefix, `/c/{scenario}/{client}/{plain|streamed}`, before the API's
path: the client's base URL. The n-th request of a case gets the scenario's
n-th turn. Every request body is first validated against the SDK's request
types (`validate.py`): one that fails gets a 400 in the API's error format,
with pydantic's error, and is recorded as a failure. Replies are built from
the SDKs' response models (`wire.py`).

Control endpoints, for the driver:
- `GET /_control/cases`: the versions, and every case with what it expects;
- `GET /_control/requests/{case}`: the requests a case received, read;
- `GET /_control/history/{scenario}`: the conversation a scenario's run goes
  on from (`scenarios.Context.history`), as `wire.Api.read` writes messages;
- `GET /_control/check/{case}`: what is wrong with them (`{"problems": [...],
  "pending": [...]}`, the second the checks main does not pass yet);
- `POST /_control/estimates/{case}`: the agent's own estimate of each
  request of a case under a context policy (`ContextPolicy::estimate`), in
  the order sent, kept on each request as `estimate` for the checks;
- `POST /_control/outcome/{case}`: the driver's result of a case, for the table.

    python3 tests/conformance/standin.py    # serves until interrupted; prints its URL
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import unquote

import validate
from scenarios import BY_NAME, MODES, cases, check, check_partner, compatible, partner_case
from wire import APIS

# The API paths after the case prefix, by client.
PATHS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
}


class Recorder:
    """What the stand-in received and answered, and the driver's outcomes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: dict[str, list[dict]] = {}
        self.outcomes: dict[str, dict] = {}
        # Requests refused by the SDK types, or that fit no case: (case, problem).
        self.failures: list[tuple[str, str]] = []

    def add(self, case: str, request: dict) -> int:
        with self.lock:
            requests = self.requests.setdefault(case, [])
            requests.append(request)
            return len(requests) - 1

    def fail(self, case: str, problem: str) -> None:
        with self.lock:
            self.failures.append((case, problem))

    def of(self, case: str) -> list[dict]:
        with self.lock:
            return list(self.requests.get(case, []))


def _api_of(client: str, path: str) -> Optional[str]:
    """Whether `path` (after the case prefix) is `client`'s API's; Gemini's
    holds the model and the method."""
    if client == "gemini":
        ok = path.startswith("/v1beta/models/") and (
            path.endswith(":generateContent") or path.endswith(":streamGenerateContent?alt=sse"))
        return "gemini" if ok else None
    return client if PATHS.get(client) == path else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes: without this, each reply
    # waits for the client's delayed ACK (40 ms on Linux).
    disable_nagle_algorithm = True
    server_version = "conformance-standin"
    recorder: Recorder

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the driver prints the table
        pass

    def _send(self, status: int, content_type: str, chunks: list[bytes]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            body = b"".join(chunks)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, "application/json", [json.dumps(value, ensure_ascii=False).encode()])

    def do_GET(self) -> None:
        path = unquote(self.path)
        if path == "/_control/cases":
            return self._json(200, {"versions": validate.versions(), "cases": cases()})
        if path.startswith("/_control/history/"):
            scenario = BY_NAME.get(path.removeprefix("/_control/history/"))
            if scenario is None or scenario.context is None:
                return self._json(404, {"error": {"message": f"no history at {path}"}})
            return self._json(200, scenario.context.history)
        if path.startswith("/_control/requests/"):
            return self._json(200, self.recorder.of(path.removeprefix("/_control/requests/")))
        if path.startswith("/_control/check/"):
            case = path.removeprefix("/_control/check/")
            return self._json(200, check_case(self.recorder, case))
        self._json(404, {"error": {"message": f"no such path: {path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = unquote(self.path)
        if path.startswith("/_control/outcome/"):
            case = path.removeprefix("/_control/outcome/")
            with self.recorder.lock:
                self.recorder.outcomes[case] = json.loads(raw)
            return self._json(200, {})
        if path.startswith("/_control/estimates/"):
            case = path.removeprefix("/_control/estimates/")
            estimates = json.loads(raw)
            with self.recorder.lock:
                requests = self.recorder.requests.get(case, [])
                for request, estimate in zip(requests, estimates):
                    request["estimate"] = estimate
            if len(requests) != len(estimates):
                self.recorder.fail(case, f"{len(estimates)} requests estimated, {len(requests)} received")
            return self._json(200, {})
        parts = path.split("/", 5)  # "", "c", scenario, client, mode, rest
        if len(parts) < 6 or parts[1] != "c" or parts[2] not in BY_NAME or parts[3] not in APIS \
                or parts[4] not in MODES:
            self.recorder.fail(path, "a request to no case")
            return self._json(404, {"error": {"message": f"no case at {path}"}})
        scenario, client, mode = BY_NAME[parts[2]], parts[3], parts[4]
        case = f"{scenario.name}/{client}/{mode}"
        rest = "/" + parts[5]
        wire = APIS[client]
        api = _api_of(client, rest)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        streamed = (rest.endswith("?alt=sse") if client == "gemini"
                    else isinstance(body, dict) and body.get("stream") is True)
        invalid = None
        if api is None:
            invalid = f"not {client}'s path: {rest}"
        elif not isinstance(body, dict):
            invalid = "the body is not a JSON object"
        else:
            invalid = validate.validate(api, raw, streamed, compatible(scenario, client))
        request = {
            "path": rest,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "body": body,
            "size": len(raw),
            "invalid": invalid,
            "read": None,
        }
        if invalid is None:
            try:
                request["read"] = wire.read(body, rest)
            except (KeyError, TypeError, ValueError) as error:
                request["invalid"] = invalid = f"the body could not be read: {error!r}"
        index = self.recorder.add(case, request)
        if invalid is not None:
            self.recorder.fail(case, f"request {index}: {invalid}")
            return self._json(400, wire.error(400, invalid))
        replies = scenario.replies()
        if index >= len(replies):
            problem = f"request {index}: the scenario has {len(replies)} replies"
            self.recorder.fail(case, problem)
            return self._json(400, wire.error(400, problem))
        if replies[index].end == "outage":
            status, error = wire.outage()
            return self._json(status, error)
        try:
            content_type, chunks = wire.reply(replies[index], streamed, body)
        except Exception as error:  # a bug of the stand-in: say so, and fail the case at once (no 5xx to resend)
            problem = f"request {index}: the stand-in could not build its reply: {error!r}"
            self.recorder.fail(case, problem)
            return self._json(400, wire.error(400, problem))
        self._send(200, content_type, chunks)


def check_case(recorder: Recorder, case: str) -> dict:
    """The checks of one case's requests: `problems`, and `pending` (the
    checks main does not pass yet that failed)."""
    name, client, mode = (case.split("/") + ["", "", ""])[:3]
    if name not in BY_NAME or client not in APIS or mode not in MODES:
        return {"problems": [f"no case {case}"], "pending": []}
    scenario = BY_NAME[name]
    checked = check(scenario, client, mode == "streamed", recorder.of(case))
    if scenario.partner is not None:
        partner = partner_case(scenario, client, mode)
        checked["problems"] += check_partner(scenario, client, mode == "streamed", recorder.of(partner))
    return checked


def start(port: int = 0) -> tuple[ThreadingHTTPServer, Recorder]:
    """The stand-in, serving on a thread; its URL is `url(server)`."""
    recorder = Recorder()
    handler = type("BoundHandler", (Handler,), {"recorder": recorder})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="standin", daemon=True).start()
    return server, recorder


def url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


def startup_check() -> None:
    """The SDK versions, and the proof that the validation is strict: exits
    if a bad body would pass or a good one fail."""
    print("SDK versions:", ", ".join(f"{name} {version}" for name, version in validate.versions().items()),
          flush=True)
    problems = validate.self_check()
    if problems:
        print("the request validation is not strict:", *problems, sep="\n", file=sys.stderr)
        raise SystemExit(2)
    typed = validate.TYPEDDICTS
    print(f"self-check: unknown keys refused at any depth ({typed} SDK TypedDicts, each forbidding them), "
          "every Iterable validated", flush=True)


if __name__ == "__main__":
    began = time.monotonic()
    startup_check()
    server, _ = start()
    print(f"stand-in ready in {time.monotonic() - began:.1f}s at {url(server)}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
