"""Each API's side of the stand-in: a model turn, written in provider-neutral
terms (`Turn`), made into the API's reply out of its SDK's response models,
plain or streamed; what a client reads from that reply, as the SDK's usage
model and the documented `Usage` table have it; and a request body read back
into provider-neutral terms, for the checks.

Every reply is validated into the SDK's models (`build`, which refuses a
field the model does not know, so a typo here cannot pass for the API's),
then dumped as the API sends it: OpenAI and Anthropic with the fields they
send, explicit nulls included (`exclude_unset`), Gemini without empty fields
(`exclude_none`, as its JSON leaves out unset fields), all by alias.

The shapes follow the APIs' reference pages and streaming guides:
- Chat Completions: https://platform.openai.com/docs/api-reference/chat/object
  and /chat-streaming (a role chunk, content or refusal and `tool_calls`
  pieces keyed by `index`, an empty delta with the `finish_reason`, a usage
  chunk with empty `choices`, `data: [DONE]`); a compatible server's
  `reasoning_content`, whole and streamed first beside a null content:
  https://api-docs.deepseek.com/guides/thinking_mode;
- Responses: https://platform.openai.com/docs/api-reference/responses/object
  and /responses-streaming (`response.created`, `response.in_progress`, each
  item's `output_item.added`, its parts and deltas, `output_item.done`, then
  `response.completed`, `response.incomplete` or `response.failed`); a
  reasoning item's summary as `response.reasoning_summary_part.added`,
  `..._text.delta`s, `..._text.done`, `..._part.done`; reasoning items with
  `encrypted_content`: https://platform.openai.com/docs/guides/reasoning;
- Anthropic: https://docs.anthropic.com/en/api/messages and
  /en/docs/build-with-claude/streaming (`message_start`, `ping`, each block's
  start, deltas and stop, `message_delta` with the stop reason and the output
  count, `message_stop`); thinking as `thinking_delta`s and one
  `signature_delta`, redacted thinking whole at its start:
  https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking;
  a server web search's `server_tool_use` (its input as `input_json_delta`s)
  and `web_search_tool_result` blocks, and `pause_turn`:
  https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool,
  /en/docs/build-with-claude/handling-stop-reasons;
- Gemini: https://ai.google.dev/api/generate-content (a whole
  `GenerateContentResponse` per event, `data:` lines ended by CRLF, usage on
  every chunk with the full count on the last; `finishReason` and
  `finishMessage`); `thoughtSignature` on the first call part, or on the
  last part of a text answer (in a stream an empty one), and `thought: true`
  summary parts: https://ai.google.dev/gemini-api/docs/thought-signatures,
  /gemini-api/docs/thinking.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

import anthropic.types as anthropic_types
import openai.types.chat as chat_types
import openai.types.responses as responses_types
import pydantic
from google.genai import types as genai
from openai.types import completion_usage

# The models the clients are made with (the stand-in checks them).
MODELS = {
    "chat": "gpt-4.1-mini",
    "responses": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}
# The keys the driver gives, and where each API carries its key.
KEYS = {
    "chat": ("authorization", "Bearer sk-conformance-openai"),
    "responses": ("authorization", "Bearer sk-conformance-openai"),
    "anthropic": ("x-api-key", "sk-ant-conformance"),
    "gemini": ("x-goog-api-key", "AIza-conformance"),
}
CREATED = 1767225600


@dataclass(frozen=True)
class Call:
    """A tool call: its id (Gemini's replies carry none, as most of its
    models send, unless the turn says), tool and arguments; `cut`: the argument text as a turn cut
    off mid-call sends it where arguments are text (Chat, Responses, an
    Anthropic stream), `args` being what the object-valued APIs show."""

    id: str
    name: str
    args: dict
    cut: Optional[str] = None

    def text(self) -> str:
        return self.cut if self.cut is not None else json.dumps(self.args, separators=(",", ":"))


@dataclass(frozen=True)
class Tokens:
    """A reply's token counts, provider-neutral: every input token (cached
    ones included), every output token (reasoning included), and of those
    the cache reads, cache writes and reasoning tokens. Each API writes what
    its usage model has of them."""

    input: int = 40
    output: int = 12
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True)
class Thought:
    """A turn's reasoning, provider-neutral: its visible text (thinking, a
    summary) and the opaque state that stands for it (a signature, the
    encrypted reasoning). Each API writes what it has of it, as its
    reasoning guide shows:

    - Anthropic: a `thinking` block (`thinking`, `signature`) or, when
      `redacted`, a `redacted_thinking` block whose `data` is the signature,
      before the turn's text and calls;
    - Responses: a `reasoning` item (`id`, `summary` of the text,
      `encrypted_content` the signature) before the turn's other items;
    - Chat, from an OpenAI-compatible server as DeepSeek documents it: the
      texts as the message's `reasoning_content` (a redacted one has none);
    - Gemini: the first thought's signature as the `thoughtSignature` of the
      turn's first call part only, or, in a turn without calls, of its text
      part (in a stream, of an empty last part); with `Turn.gemini_thoughts`,
      its text as a `thought: true` part first (what `includeThoughts` asks for).

    Signatures are base64, as Gemini's are (google-genai reads them as
    bytes), without `+` or `/` (it writes bytes back URL-safe).
    """

    text: str = ""
    signature: str = ""
    redacted: bool = False
    #: the Responses item's id
    id: str = "rs_c0nf0rm"


@dataclass(frozen=True)
class Search:
    """A web search Anthropic's server ran in the turn: its
    `server_tool_use` block (the query) and its `web_search_tool_result`
    block (each result's url, title and encrypted content)."""

    id: str
    query: str
    results: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Turn:
    """One model reply: its text (for a refusal, the refusal's), its calls,
    how it ends, its tokens, and its reasoning.

    `end`: "complete"; "truncated" at the output limit; "refused";
    "paused" (Anthropic `pause_turn`: the turn goes back as it is to go on);
    "malformed" (Gemini: a call it could not read, `message` its
    `finishMessage`); "empty" (Gemini: a candidate with nothing in it that
    ended normally); "failed" (Responses `status: failed`); "outage" (the
    provider is down: `Api.outage`, not a reply). `reason`: the
    provider's own reason where the scenario names one (else each API's
    usual one for the ending)."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    end: str = "complete"
    tokens: Tokens = field(default_factory=Tokens)
    #: Gemini's calls carry their ids (most of its models send none)
    gemini_ids: bool = False
    reasoning: tuple[Thought, ...] = ()
    #: Gemini sends the thoughts' texts as `thought: true` parts
    gemini_thoughts: bool = False
    reason: Optional[str] = None
    message: Optional[str] = None
    #: Anthropic's server searched the web in this turn
    search: Optional[Search] = None


def pieces(text: str, size: int = 7) -> list[str]:
    """A text as a stream sends it: in pieces (cut at characters)."""
    return [text[at:at + size] for at in range(0, len(text), size)] or [""]


def _extras(value: Any, path: str) -> list[str]:
    if isinstance(value, pydantic.BaseModel):
        found = [f"{path}.{key}" for key in (value.model_extra or {})]
        for name in type(value).model_fields:
            found += _extras(getattr(value, name), f"{path}.{name}")
        return found
    if isinstance(value, (list, tuple)):
        return [item for index, element in enumerate(value) for item in _extras(element, f"{path}[{index}]")]
    if isinstance(value, dict):
        return [item for key, element in value.items() for item in _extras(element, f"{path}.{key}")]
    return []


#: The one field the suite writes beyond the SDKs' response models: the
#: `reasoning_content` an OpenAI-compatible server sends beside a Chat
#: message's content, whole and as a stream's delta, as DeepSeek documents it
#: (https://api-docs.deepseek.com/guides/thinking_mode, also llama.cpp's and
#: vLLM's servers). `ChatCompletionMessage` and `ChoiceDelta` keep unknown
#: fields as extras; this one is allowed there and nowhere else.
COMPATIBLE_EXTRAS = ("message.reasoning_content", "delta.reasoning_content")


def build(model: type[pydantic.BaseModel], data: dict, allowed: tuple[str, ...] = ()) -> pydantic.BaseModel:
    """`data` as the SDK's `model`: validated, and refused if any field is
    one the model does not have (the OpenAI and Anthropic models keep
    unknown fields as extras), but those at a path ending in one of
    `allowed` (`COMPATIBLE_EXTRAS`)."""
    value = model.model_validate(data)
    extras = [path for path in _extras(value, model.__name__)
              if not any(path.endswith("." + suffix) for suffix in allowed)]
    if extras:
        raise ValueError(f"fields {model.__name__} does not have: {extras}")
    return value


def dump(value: pydantic.BaseModel) -> dict:
    """An OpenAI or Anthropic model as the API sends it."""
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


def sse(events: list[tuple[Optional[str], dict | str]], end: str = "\n\n") -> list[bytes]:
    """Server-sent events: `event:` (if named) and `data:` lines."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        line = (f"event: {name}\n" if name else "") + f"data: {text}{end}"
        out.append(line.encode())
    return out


def _none_if_zero(count: int) -> Optional[int]:
    return count or None


class Api:
    """One API: its replies, what its client reads from them, and its
    requests read back."""

    name = ""
    #: the provider's name, as the client gives it (`Model::provider`)
    provider = "openai"
    #: the provider's reason for a turn cut at the output limit, and for a refusal
    truncated = ""
    refused = ""

    def reply(self, turn: Turn, streamed: bool, request: dict) -> tuple[str, list[bytes]]:
        """The reply's content type and body (one piece, or one per event)."""
        raise NotImplementedError

    def usage(self, tokens: Tokens) -> Any:
        """The SDK's usage model for these counts."""
        raise NotImplementedError

    def expected_usage(self, tokens: Tokens) -> dict:
        """What the client must read from `usage(tokens)`, by the table on
        `Usage` (tools-agent/src/model.rs), as `Usage` serializes: a count
        the API does not send is left out."""
        raise NotImplementedError

    def answer(self, turn: Turn) -> str:
        """The text the client gives as the turn's answer."""
        return turn.text

    def stop(self, turn: Turn) -> tuple[str, Optional[str]]:
        """How a run ends on this turn: `StopReason`'s variant and reason."""
        if turn.end == "truncated":
            return "Truncated", turn.reason or self.truncated
        if turn.end == "refused":
            return "Refused", turn.reason or self.refused
        return "Answered", None

    def failure(self, turn: Turn, streamed: bool) -> Optional[str]:
        """The error a run fails with on this turn (its `ModelError` as it
        prints), if it fails."""
        return None

    def kept(self, turn: Turn, streamed: bool) -> list:
        """What a later request carries of the turn besides its text and
        calls, as `read` shows it: `[position, piece]` for each reasoning
        piece (or provider item), `position` its place among the turn's
        blocks, parts or items as the client sends them, `piece` as sent."""
        return []

    def transcript(self, turn: Turn, streamed: bool) -> list:
        """The reasoning pieces (and provider items) the transcript keeps of
        the turn, in order, as `toolcall_provider::Content` serializes them."""
        return []

    def shown(self, turn: Turn) -> str:
        """The reasoning a stream of the turn shows (`AgentEvent::ReasoningDelta`)."""
        return ""

    def error(self, status: int, message: str) -> dict:
        """An error body, as the API writes one."""
        return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}

    def outage(self) -> tuple[int, dict]:
        """The status and body the API answers when it is overloaded: OpenAI's
        503 (https://platform.openai.com/docs/guides/error-codes)."""
        return 503, {"error": {"message": "The engine is currently overloaded, please try again later.",
                               "type": "server_error", "param": None, "code": None}}

    def read(self, body: dict, path: str) -> dict:
        """A request, provider-neutral: `model`, `streamed`, `system`, the
        offered `tools`' names, its `server_tools` (Anthropic's), and
        `messages`: ["user", text], ["assistant", text, [[key, name,
        args]...]] with a fourth element, `[[position, piece]...]`, when the
        message carries reasoning or a provider's items (`Api.kept`),
        ["results", [[key, content]...]] (key: the call's id, or Gemini's
        name where it sent no id), or ["other", what] for what the checks do
        not know."""
        raise NotImplementedError


def _thinking_texts(turn: Turn) -> str:
    """The visible reasoning of a turn, joined (none of a redacted thought)."""
    return "".join(thought.text for thought in turn.reasoning if not thought.redacted)


#: The content parts of each API that hold a user's image or file (Chat,
#: Responses, Anthropic), read as ["media", "image"] or ["media", "file"]
#: after the message's text; Gemini's `inlineData` and `fileData` parts are
#: read by their mimeType.
MEDIA = {"image_url": "image", "file": "file", "input_image": "image", "input_file": "file",
         "image": "image", "document": "file"}


def _media(part: dict) -> list:
    """A Gemini part of bytes or at a URI, as ["media", kind]."""
    blob = part.get("inlineData") or part.get("fileData") or {}
    return ["media", "image" if str(blob.get("mimeType", "")).startswith("image/") else "file"]


def _user(messages: list, content: Any) -> None:
    """A user message (a string, or a list of content parts): its text,
    then each image or file as ["media", kind]."""
    _group(messages, ["user", _text(content)])
    for part in content if isinstance(content, list) else []:
        if part.get("type") in MEDIA:
            messages.append(["media", MEDIA[part["type"]]])


def _group(messages: list, item: list) -> None:
    """Results that come one message each (Chat, Responses) go together."""
    if item[0] == "results" and messages and messages[-1][0] == "results":
        messages[-1][1].extend(item[1])
    elif item[0] == "call" and messages and messages[-1][0] == "assistant":
        messages[-1][2].append(item[1])
    elif item[0] == "call":
        messages.append(["assistant", "", [item[1]]])
    else:
        messages.append(item)


def _text(content: Any, kinds: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """The text of a content string or list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") in kinds)


class Chat(Api):
    name = "chat"
    truncated = "length"
    refused = "refusal"

    def usage(self, t: Tokens) -> completion_usage.CompletionUsage:
        details = {"cached_tokens": t.cache_read, "audio_tokens": 0}
        if t.cache_write:
            details["cache_write_tokens"] = t.cache_write
        return build(completion_usage.CompletionUsage, {
            "prompt_tokens": t.input, "completion_tokens": t.output, "total_tokens": t.input + t.output,
            "prompt_tokens_details": details,
            "completion_tokens_details": {"reasoning_tokens": t.reasoning, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        })

    def expected_usage(self, t: Tokens) -> dict:
        u = self.usage(t)
        counts = {
            "input_tokens": u.prompt_tokens,
            "output_tokens": u.completion_tokens,
            "cache_read_tokens": u.prompt_tokens_details.cached_tokens,
            "cache_write_tokens": u.prompt_tokens_details.cache_write_tokens,
            "reasoning_tokens": u.completion_tokens_details.reasoning_tokens,
        }
        return {key: value for key, value in counts.items() if value is not None}

    def kept(self, turn: Turn, streamed: bool) -> list:
        reasoning = _thinking_texts(turn)
        return [[0, {"reasoning_content": reasoning}]] if reasoning else []

    def transcript(self, turn: Turn, streamed: bool) -> list:
        reasoning = _thinking_texts(turn)
        return [{"type": "reasoning", "format": "reasoning_content", "text": reasoning}] if reasoning else []

    def shown(self, turn: Turn) -> str:
        return _thinking_texts(turn)

    def _finish(self, turn: Turn) -> str:
        if turn.end == "truncated":
            return "length"
        return "tool_calls" if turn.calls and turn.end == "complete" else "stop"

    def _tool_calls(self, turn: Turn) -> list[dict]:
        return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.text()}}
                for c in turn.calls]

    def reply(self, turn: Turn, streamed: bool, request: dict) -> tuple[str, list[bytes]]:
        refused = turn.end == "refused"
        head = {"id": "chatcmpl-C0nf0rmance", "created": CREATED, "model": MODELS["chat"] + "-2025-04-14",
                "service_tier": "default", "system_fingerprint": "fp_c0nf0rm"}
        usage = dump(self.usage(turn.tokens))
        # A compatible server's reasoning (OpenAI's own Chat API sends none).
        reasoning = _thinking_texts(turn)
        allowed = COMPATIBLE_EXTRAS if reasoning else ()
        if not streamed:
            message = {"role": "assistant", "content": None if refused else (turn.text or None),
                       "refusal": turn.text if refused else None, "annotations": []}
            if reasoning:
                message["reasoning_content"] = reasoning
            if turn.calls:
                message["tool_calls"] = self._tool_calls(turn)
            body = build(chat_types.ChatCompletion, {**head, "object": "chat.completion", "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": self._finish(turn)}],
                "usage": usage}, allowed)
            return "application/json", [json.dumps(dump(body), ensure_ascii=False).encode()]

        def chunk(delta: dict, finish: Optional[str] = None, choices: bool = True, counts=None) -> dict:
            value = {**head, "object": "chat.completion.chunk", "usage": counts, "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}] if choices else []}
            return dump(build(chat_types.ChatCompletionChunk, value, allowed))

        chunks = [chunk({"role": "assistant", "content": None if refused else "", "refusal": "" if refused else None})]
        # DeepSeek streams the reasoning first, the content null beside it.
        if reasoning:
            chunks += [chunk({"content": None, "reasoning_content": piece}) for piece in pieces(reasoning)]
        if turn.text:
            key = "refusal" if refused else "content"
            chunks += [chunk({key: piece}) for piece in pieces(turn.text)]
        for index, call in enumerate(turn.calls):
            chunks.append(chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                                 "function": {"name": call.name, "arguments": ""}}]}))
            chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                       for piece in pieces(call.text(), 5)]
        chunks.append(chunk({}, self._finish(turn)))
        chunks.append(chunk({}, choices=False, counts=usage))
        return "text/event-stream", sse([(None, c) for c in chunks] + [(None, "[DONE]")])

    def read(self, body: dict, path: str) -> dict:
        messages: list = []
        system = None
        for message in body.get("messages", []):
            role = message.get("role")
            if role in ("system", "developer"):
                system = _text(message.get("content"))
            elif role == "user":
                _user(messages, message.get("content"))
            elif role == "assistant":
                calls = [[c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])]
                         for c in message.get("tool_calls") or []]
                entry = ["assistant", _text(message.get("content")), calls]
                if "reasoning_content" in message:
                    entry.append([[0, {"reasoning_content": message["reasoning_content"]}]])
                _group(messages, entry)
            elif role == "tool":
                _group(messages, ["results", [[message.get("tool_call_id"), _text(message.get("content"))]]])
            else:
                _group(messages, ["other", role])
        return {
            "model": body.get("model"),
            "streamed": body.get("stream") is True and body.get("stream_options") == {"include_usage": True},
            "system": system,
            "tools": [t["function"]["name"] for t in body.get("tools", []) if t.get("type") == "function"],
            "messages": messages,
        }


class Responses(Api):
    name = "responses"
    truncated = "max_output_tokens"
    refused = "refusal"

    def usage(self, t: Tokens) -> responses_types.ResponseUsage:
        return build(responses_types.ResponseUsage, {
            "input_tokens": t.input,
            "input_tokens_details": {"cached_tokens": t.cache_read, "cache_write_tokens": t.cache_write},
            "output_tokens": t.output,
            "output_tokens_details": {"reasoning_tokens": t.reasoning},
            "total_tokens": t.input + t.output,
        })

    def expected_usage(self, t: Tokens) -> dict:
        u = self.usage(t)
        counts = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_tokens": u.input_tokens_details.cached_tokens,
            "cache_write_tokens": u.input_tokens_details.cache_write_tokens,
            "reasoning_tokens": u.output_tokens_details.reasoning_tokens,
        }
        return {key: value for key, value in counts.items() if value is not None}

    #: What a failed response says (`ResponseError`).
    FAILED = {"code": "server_error", "message": "The model failed to generate a response."}

    def failure(self, turn: Turn, streamed: bool) -> Optional[str]:
        if turn.end != "failed":
            return None
        return (f"openai rejected the request (HTTP 200): the response failed: "
                f"{self.FAILED['code']}: {self.FAILED['message']}")

    def _reasoning_item(self, thought: Thought, done: bool) -> dict:
        """A `reasoning` output item: its summary and encrypted content (a
        redacted thought has no summary), or as first announced."""
        item = {"id": thought.id, "type": "reasoning", "summary": []}
        if done:
            if thought.text and not thought.redacted:
                item["summary"] = [{"type": "summary_text", "text": thought.text}]
            if thought.signature:
                item["encrypted_content"] = thought.signature
        return item

    def kept(self, turn: Turn, streamed: bool) -> list:
        # Each reasoning item goes back as it came, first among the turn's items.
        return [[index, dump(build(responses_types.ResponseReasoningItem, self._reasoning_item(thought, True)))]
                for index, thought in enumerate(turn.reasoning)]

    def transcript(self, turn: Turn, streamed: bool) -> list:
        out = []
        for _, item in self.kept(turn, streamed):
            piece = {"type": "reasoning", "format": "item", "id": item["id"]}
            if item["summary"]:
                piece["summary"] = [part["text"] for part in item["summary"]]
            if "encrypted_content" in item:
                piece["encrypted_content"] = item["encrypted_content"]
            out.append(piece)
        return out

    def shown(self, turn: Turn) -> str:
        return _thinking_texts(turn)

    def _items(self, turn: Turn, done: bool) -> list[dict]:
        """The output items, whole (`done`) or as first announced: the
        reasoning items, the message, the function calls."""
        items = [self._reasoning_item(thought, done) for thought in turn.reasoning]
        status = "incomplete" if turn.end == "truncated" else "completed"
        if turn.text:
            part = ({"type": "refusal", "refusal": turn.text} if turn.end == "refused"
                    else {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []})
            items.append({"id": "msg_c0nf0rm", "type": "message", "role": "assistant",
                          "status": status if done else "in_progress", "content": [part] if done else []})
        for call in turn.calls:
            items.append({"id": f"fc_{call.id}", "type": "function_call", "call_id": call.id, "name": call.name,
                          "arguments": call.text() if done else "",
                          "status": status if done else "in_progress"})
        return items

    def _response(self, turn: Turn, request: dict, final: bool) -> dict:
        if not final:
            status = "in_progress"
        else:
            status = {"truncated": "incomplete", "failed": "failed"}.get(turn.end, "completed")
        response = {
            "id": "resp_c0nf0rm", "object": "response", "created_at": CREATED, "status": status,
            "background": False, "error": self.FAILED if status == "failed" else None,
            "incomplete_details": {"reason": "max_output_tokens"} if final and turn.end == "truncated" else None,
            "instructions": request.get("instructions"), "max_output_tokens": request.get("max_output_tokens"),
            "model": MODELS["responses"] + "-2025-04-14",
            "output": self._items(turn, True) if final and status != "failed" else [],
            "parallel_tool_calls": request.get("parallel_tool_calls", True), "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None}, "service_tier": "default",
            "temperature": 1.0, "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": request.get("tool_choice", "auto"), "tools": request.get("tools", []),
            "top_p": 1.0, "truncation": "disabled",
            "usage": dump(self.usage(turn.tokens)) if final and status != "failed" else None,
            "user": None, "metadata": {},
        }
        return dump(build(responses_types.Response, response))

    def reply(self, turn: Turn, streamed: bool, request: dict) -> tuple[str, list[bytes]]:
        if not streamed:
            return "application/json", [json.dumps(self._response(turn, request, True), ensure_ascii=False).encode()]
        events: list[Any] = []

        def event(model: type[pydantic.BaseModel], data: dict) -> None:
            data["sequence_number"] = len(events)
            events.append((data["type"], dump(build(model, data))))

        t = responses_types
        started = self._response(turn, request, False)
        event(t.ResponseCreatedEvent, {"type": "response.created", "response": started})
        event(t.ResponseInProgressEvent, {"type": "response.in_progress", "response": started})
        if turn.end == "failed":
            event(t.ResponseFailedEvent, {"type": "response.failed", "response": self._response(turn, request, True)})
            return "text/event-stream", sse(events)
        whole = self._items(turn, True)
        for index, (first, item) in enumerate(zip(self._items(turn, False), whole)):
            at = {"item_id": item["id"], "output_index": index}
            event(t.ResponseOutputItemAddedEvent, {"type": "response.output_item.added", "output_index": index,
                                                   "item": first})
            if item["type"] == "reasoning":
                for number, summary in enumerate(item["summary"]):
                    at_part = {**at, "summary_index": number}
                    event(t.ResponseReasoningSummaryPartAddedEvent, {
                        "type": "response.reasoning_summary_part.added", **at_part,
                        "part": {"type": "summary_text", "text": ""}})
                    for piece in pieces(summary["text"]):
                        event(t.ResponseReasoningSummaryTextDeltaEvent, {
                            "type": "response.reasoning_summary_text.delta", **at_part, "delta": piece})
                    event(t.ResponseReasoningSummaryTextDoneEvent, {
                        "type": "response.reasoning_summary_text.done", **at_part, "text": summary["text"]})
                    event(t.ResponseReasoningSummaryPartDoneEvent, {
                        "type": "response.reasoning_summary_part.done", **at_part, "part": summary})
            elif item["type"] == "message":
                part = item["content"][0]
                refusal = part["type"] == "refusal"
                empty = {"type": "refusal", "refusal": ""} if refusal else {**part, "text": ""}
                at = {**at, "content_index": 0}
                event(t.ResponseContentPartAddedEvent, {"type": "response.content_part.added", **at, "part": empty})
                for piece in pieces(turn.text):
                    if refusal:
                        event(t.ResponseRefusalDeltaEvent, {"type": "response.refusal.delta", **at, "delta": piece})
                    else:
                        event(t.ResponseTextDeltaEvent, {"type": "response.output_text.delta", **at, "delta": piece,
                                                         "logprobs": []})
                if refusal:
                    event(t.ResponseRefusalDoneEvent, {"type": "response.refusal.done", **at, "refusal": turn.text})
                else:
                    event(t.ResponseTextDoneEvent, {"type": "response.output_text.done", **at, "text": turn.text,
                                                    "logprobs": []})
                event(t.ResponseContentPartDoneEvent, {"type": "response.content_part.done", **at, "part": part})
            else:
                for piece in pieces(item["arguments"], 5):
                    event(t.ResponseFunctionCallArgumentsDeltaEvent,
                          {"type": "response.function_call_arguments.delta", **at, "delta": piece})
                event(t.ResponseFunctionCallArgumentsDoneEvent,
                      {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]})
            event(t.ResponseOutputItemDoneEvent, {"type": "response.output_item.done", "output_index": index,
                                                  "item": item})
        final = self._response(turn, request, True)
        if turn.end == "truncated":
            event(t.ResponseIncompleteEvent, {"type": "response.incomplete", "response": final})
        else:
            event(t.ResponseCompletedEvent, {"type": "response.completed", "response": final})
        return "text/event-stream", sse(events)

    def read(self, body: dict, path: str) -> dict:
        messages: list = []
        # The model's items of one turn (reasoning, its message, its calls)
        # come one after another: they are one assistant entry, each
        # reasoning item kept with its place among them.
        turn: list[dict] = []

        def close() -> None:
            if not turn:
                return
            text = "".join(_text(item.get("content")) for item in turn if item.get("type", "message") == "message")
            calls = [[item["call_id"], item["name"], json.loads(item["arguments"])]
                     for item in turn if item.get("type") == "function_call"]
            entry = ["assistant", text, calls]
            kept = [[index, item] for index, item in enumerate(turn) if item.get("type") == "reasoning"]
            if kept:
                entry.append(kept)
            messages.append(entry)
            turn.clear()

        for item in body.get("input", []):
            kind = item.get("type", "message")
            if kind in ("reasoning", "function_call") or (kind == "message" and item.get("role") == "assistant"):
                turn.append(item)
                continue
            close()
            if kind == "message" and item.get("role") == "user":
                _user(messages, item.get("content"))
            elif kind == "function_call_output":
                _group(messages, ["results", [[item["call_id"], _text(item.get("output"))]]])
            else:
                _group(messages, ["other", kind])
        close()
        return {
            "model": body.get("model"),
            "streamed": body.get("stream") is True,
            "system": body.get("instructions"),
            "tools": [t["name"] for t in body.get("tools", []) if t.get("type") == "function"],
            "messages": messages,
        }


class Anthropic(Api):
    name = "anthropic"
    provider = "anthropic"
    truncated = "max_tokens"
    refused = "refusal"

    def error(self, status: int, message: str) -> dict:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}

    def outage(self) -> tuple[int, dict]:
        """Anthropic's 529 `overloaded_error` (https://docs.claude.com/en/api/errors)."""
        return 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
                     "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}

    def usage(self, t: Tokens) -> anthropic_types.Usage:
        usage = {
            "input_tokens": t.input - t.cache_read - t.cache_write,
            "cache_creation_input_tokens": t.cache_write,
            "cache_read_input_tokens": t.cache_read,
            "cache_creation": {"ephemeral_5m_input_tokens": t.cache_write, "ephemeral_1h_input_tokens": 0},
            "output_tokens": t.output,
            "service_tier": "standard",
        }
        if t.reasoning:
            usage["output_tokens_details"] = {"thinking_tokens": t.reasoning}
        return build(anthropic_types.Usage, usage)

    def expected_usage(self, t: Tokens) -> dict:
        u = self.usage(t)
        read, written = u.cache_read_input_tokens, u.cache_creation_input_tokens
        counts = {
            "input_tokens": u.input_tokens + (read or 0) + (written or 0),
            "output_tokens": u.output_tokens,
            "cache_read_tokens": read,
            "cache_write_tokens": written,
            "reasoning_tokens": u.output_tokens_details.thinking_tokens if u.output_tokens_details else None,
        }
        return {key: value for key, value in counts.items() if value is not None}

    def _stop_reason(self, turn: Turn) -> str:
        if turn.end == "truncated":
            return turn.reason or "max_tokens"
        if turn.end == "refused":
            return "refusal"
        if turn.end == "paused":
            return "pause_turn"
        return "tool_use" if turn.calls else "end_turn"

    def _content(self, turn: Turn) -> list[dict]:
        """The turn's blocks in the order the API sends them: thinking, the
        server's search, text, tool uses."""
        content = [{"type": "redacted_thinking", "data": t.signature} if t.redacted
                   else {"type": "thinking", "thinking": t.text, "signature": t.signature}
                   for t in turn.reasoning]
        if turn.search:
            search = turn.search
            content.append({"type": "server_tool_use", "id": search.id, "name": "web_search",
                            "input": {"query": search.query}})
            content.append({"type": "web_search_tool_result", "tool_use_id": search.id, "content": [
                {"type": "web_search_result", "url": url, "title": title, "encrypted_content": encrypted,
                 "page_age": None} for url, title, encrypted in search.results]})
        if turn.text:
            content.append({"type": "text", "text": turn.text, "citations": None})
        content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in turn.calls]
        return content

    def _message(self, turn: Turn) -> dict:
        return {"id": "msg_01C0nf0rmance", "type": "message", "role": "assistant",
                "model": MODELS["anthropic"] + "-20250929", "content": self._content(turn),
                "stop_reason": self._stop_reason(turn), "stop_sequence": None,
                "usage": dump(self.usage(turn.tokens))}

    def kept(self, turn: Turn, streamed: bool) -> list:
        # Thinking, redacted thinking and the server's blocks go back as they
        # came, in their places among the turn's blocks.
        blocks = dump(build(anthropic_types.Message, self._message(turn)))["content"]
        return [[index, block] for index, block in enumerate(blocks) if block["type"] not in ("text", "tool_use")]

    def transcript(self, turn: Turn, streamed: bool) -> list:
        out = []
        for _, block in self.kept(turn, streamed):
            if block["type"] == "thinking":
                out.append({"type": "reasoning", "format": "thinking", "thinking": block["thinking"],
                            "signature": block["signature"]})
            elif block["type"] == "redacted_thinking":
                out.append({"type": "reasoning", "format": "redacted_thinking", "data": block["data"]})
            else:
                out.append({"type": "native", "provider": "anthropic", "item": block})
        return out

    def shown(self, turn: Turn) -> str:
        return _thinking_texts(turn)

    def reply(self, turn: Turn, streamed: bool, request: dict) -> tuple[str, list[bytes]]:
        message = self._message(turn)
        if not streamed:
            return "application/json", [json.dumps(dump(build(anthropic_types.Message, message)),
                                                   ensure_ascii=False).encode()]
        a = anthropic_types
        events: list[Any] = []

        def event(model: type[pydantic.BaseModel], data: dict) -> None:
            events.append((data["type"], dump(build(model, data))))

        def start(index: int, block: dict) -> None:
            event(a.RawContentBlockStartEvent, {"type": "content_block_start", "index": index,
                                                "content_block": block})

        def delta(index: int, value: dict) -> None:
            event(a.RawContentBlockDeltaEvent, {"type": "content_block_delta", "index": index, "delta": value})

        start_usage = {**message["usage"], "output_tokens": 1}
        start_usage.pop("output_tokens_details", None)
        event(a.RawMessageStartEvent, {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None, "usage": start_usage}})
        events.append(("ping", {"type": "ping"}))
        calls = iter(turn.calls)
        for index, block in enumerate(message["content"]):
            kind = block["type"]
            if kind == "text":
                start(index, {**block, "text": ""})
                for piece in pieces(block["text"]):
                    delta(index, {"type": "text_delta", "text": piece})
            elif kind == "thinking":
                # The extended-thinking stream: the text in `thinking_delta`s,
                # then the signature in one `signature_delta`.
                start(index, {**block, "thinking": "", "signature": ""})
                for piece in pieces(block["thinking"]):
                    delta(index, {"type": "thinking_delta", "thinking": piece})
                delta(index, {"type": "signature_delta", "signature": block["signature"]})
            elif kind in ("tool_use", "server_tool_use"):
                # A call's input (a server tool's too) streams as JSON text.
                text = next(calls).text() if kind == "tool_use" else json.dumps(block["input"], separators=(",", ":"))
                start(index, {**block, "input": {}})
                for piece in [""] + pieces(text, 5):
                    delta(index, {"type": "input_json_delta", "partial_json": piece})
            else:  # redacted thinking, a server tool's result: whole at the start
                start(index, block)
            event(a.RawContentBlockStopEvent, {"type": "content_block_stop", "index": index})
        # The output count, as the streaming guide shows it; with the cache
        # or thinking in play, every cumulative count `MessageDeltaUsage` has.
        delta_usage = {"output_tokens": turn.tokens.output}
        t = turn.tokens
        if t.cache_read or t.cache_write or t.reasoning:
            whole = message["usage"]
            delta_usage.update({key: whole[key] for key in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens_details")
                if key in whole})
        event(a.RawMessageDeltaEvent, {"type": "message_delta", "delta": {
            "stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": delta_usage})
        event(a.RawMessageStopEvent, {"type": "message_stop"})
        return "text/event-stream", sse(events)

    def read(self, body: dict, path: str) -> dict:
        messages: list = []
        for message in body.get("messages", []):
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            if message.get("role") == "assistant":
                text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
                calls = [[b["id"], b["name"], b["input"]] for b in blocks if b.get("type") == "tool_use"]
                entry = ["assistant", text, calls]
                kept = [[index, b] for index, b in enumerate(blocks) if b.get("type") not in ("text", "tool_use")]
                if kept:
                    entry.append(kept)
                _group(messages, entry)
                continue
            for b in blocks:
                if b.get("type") == "text":
                    _group(messages, ["user", b["text"]])
                elif b.get("type") == "tool_result":
                    _group(messages, ["results", [[b["tool_use_id"], _text(b.get("content"))]]])
                elif b.get("type") in MEDIA:
                    messages.append(["media", MEDIA[b["type"]]])
                else:
                    _group(messages, ["other", b.get("type")])
        system = body.get("system")
        tools = body.get("tools", [])
        return {
            "model": body.get("model"),
            "streamed": body.get("stream") is True,
            "system": _text(system) if system is not None else None,
            "tools": [t["name"] for t in tools if "input_schema" in t],
            "server_tools": [t.get("type") for t in tools if "input_schema" not in t],
            "messages": messages,
        }


class Gemini(Api):
    name = "gemini"
    provider = "gemini"
    truncated = "MAX_TOKENS"
    refused = "SAFETY"

    def error(self, status: int, message: str) -> dict:
        return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}

    def outage(self) -> tuple[int, dict]:
        """Gemini's 503 `UNAVAILABLE` (https://ai.google.dev/gemini-api/docs/troubleshooting)."""
        return 503, {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                               "status": "UNAVAILABLE"}}

    def usage(self, t: Tokens, whole: bool = True) -> genai.GenerateContentResponseUsageMetadata:
        if not whole:  # what a stream's earlier chunks say: the prompt only
            return genai.GenerateContentResponseUsageMetadata.model_validate(
                {"promptTokenCount": t.input, "totalTokenCount": t.input})
        return genai.GenerateContentResponseUsageMetadata.model_validate({
            "promptTokenCount": t.input,
            "cachedContentTokenCount": _none_if_zero(t.cache_read),
            "candidatesTokenCount": t.output - t.reasoning,
            "thoughtsTokenCount": _none_if_zero(t.reasoning),
            "totalTokenCount": t.input + t.output,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": t.input}],
        })

    def expected_usage(self, t: Tokens) -> dict:
        u = self.usage(t)
        thoughts = u.thoughts_token_count
        output = u.candidates_token_count
        counts = {
            "input_tokens": u.prompt_token_count,
            "output_tokens": (output + (thoughts or 0)) if output is not None else thoughts,
            "cache_read_tokens": u.cached_content_token_count,
            "cache_write_tokens": None,  # (not reported)
            "reasoning_tokens": thoughts,
        }
        return {key: value for key, value in counts.items() if value is not None}

    def _bare(self, turn: Turn) -> bool:
        """A candidate stopped for safety comes without content."""
        return turn.end == "refused" and (turn.reason or self.refused) == "SAFETY"

    def answer(self, turn: Turn) -> str:
        return "" if self._bare(turn) else turn.text

    def failure(self, turn: Turn, streamed: bool) -> Optional[str]:
        return "gemini sent an empty answer (STOP): no text and no tool call" if turn.end == "empty" else None

    def _finish(self, turn: Turn) -> str:
        if turn.end == "truncated":
            return "MAX_TOKENS"
        if turn.end == "refused":
            return turn.reason or self.refused
        if turn.end == "malformed":
            return turn.reason or "MALFORMED_FUNCTION_CALL"
        return "STOP"

    def _signature(self, turn: Turn) -> Optional[str]:
        """The turn's signature: its first thought's."""
        return next((thought.signature for thought in turn.reasoning if thought.signature), None)

    def _thoughts(self, turn: Turn) -> list[str]:
        if not turn.gemini_thoughts:
            return []
        return [thought.text for thought in turn.reasoning if thought.text and not thought.redacted]

    def _parts(self, turn: Turn, streamed: bool) -> list[dict]:
        """The turn's parts, whole: thought summaries, the text, the calls;
        the signature on the first call part (Gemini 3 signs only the first
        of parallel calls), or, without calls, on the text part (in a stream,
        on an empty last part)."""
        parts = [{"text": text, "thought": True} for text in self._thoughts(turn)]
        if turn.text and not self._bare(turn):
            parts.append({"text": turn.text})
        calls = [{"functionCall": {"name": c.name, "args": c.args, **({"id": c.id} if turn.gemini_ids else {})}}
                 for c in turn.calls]
        signature = self._signature(turn)
        if signature and calls:
            calls[0]["thoughtSignature"] = signature
        elif signature and turn.text and not streamed:
            parts[-1]["thoughtSignature"] = signature
        elif signature and turn.text:
            calls.append({"text": "", "thoughtSignature": signature})
        return parts + calls

    def _sent(self, part: dict) -> dict:
        """A part as the SDK's `Part` dumps it: what the client received."""
        return genai.Part.model_validate(part).model_dump(mode="json", by_alias=True, exclude_none=True)

    def kept(self, turn: Turn, streamed: bool) -> list:
        # The client joins a stream's pieces of text (and of thought) into
        # one part each: the parts it sends back are those of the whole turn.
        kept = []
        for index, part in enumerate(self._sent(part) for part in self._parts(turn, streamed)):
            if part.get("thought"):
                kept.append([index, {"text": part["text"], "thought": True}])
            if "thoughtSignature" in part:
                kept.append([index, {"thoughtSignature": part["thoughtSignature"]}])
        return kept

    def transcript(self, turn: Turn, streamed: bool) -> list:
        out = []
        for _, piece in self.kept(turn, streamed):
            if piece.get("thought"):
                out.append({"type": "reasoning", "format": "thought", "text": piece["text"]})
            else:
                out.append({"type": "reasoning", "format": "thought_signature",
                            "signature": piece["thoughtSignature"]})
        return out

    def shown(self, turn: Turn) -> str:
        return "".join(self._thoughts(turn))

    def _response(self, parts: list[dict], finish: Optional[str], usage, turn: Optional[Turn] = None) -> dict:
        candidate: dict[str, Any] = {"index": 0}
        if parts:
            candidate["content"] = {"role": "model", "parts": parts}
        elif turn is not None and turn.end == "malformed":
            candidate["content"] = {}  # as the API sends it with MALFORMED_FUNCTION_CALL
        elif turn is not None and turn.end == "empty":
            candidate["content"] = {"role": "model"}  # nothing in it, and STOP
        if finish:
            candidate["finishReason"] = finish
        if finish and turn is not None and turn.message:
            candidate["finishMessage"] = turn.message
        if finish == "SAFETY":
            candidate["safetyRatings"] = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH",
                                           "blocked": True}]
        response = genai.GenerateContentResponse.model_validate({
            "candidates": [candidate], "usageMetadata": usage.model_dump(by_alias=True, exclude_none=True),
            "modelVersion": MODELS["gemini"], "responseId": "c0nf0rmanceRespId"})
        return response.model_dump(mode="json", by_alias=True, exclude_none=True)

    def reply(self, turn: Turn, streamed: bool, request: dict) -> tuple[str, list[bytes]]:
        finish = self._finish(turn)
        parts = self._parts(turn, streamed)
        if not streamed:
            body = self._response(parts, finish, self.usage(turn.tokens), turn)
            return "application/json", [json.dumps(body, ensure_ascii=False).encode()]
        # Thoughts and text in pieces, a chunk each, with the prompt's count;
        # the calls (or the signed empty part) whole in the last, with the
        # finish and the full count.
        early = self.usage(turn.tokens, whole=False)
        chunks = []
        for part in parts:
            if "text" in part and part["text"] and "thoughtSignature" not in part:
                chunks += [self._response([{**part, "text": piece}], None, early) for piece in pieces(part["text"])]
        last = [part for part in parts if not ("text" in part and part["text"] and "thoughtSignature" not in part)]
        chunks.append(self._response(last, finish, self.usage(turn.tokens), turn))
        return "text/event-stream", sse([(None, c) for c in chunks], end="\r\n\r\n")

    def read(self, body: dict, path: str) -> dict:
        messages: list = []
        for content in body.get("contents", []):
            parts = content.get("parts", [])
            if content.get("role") == "model":
                text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
                calls = [[p["functionCall"].get("id") or p["functionCall"]["name"], p["functionCall"]["name"],
                          p["functionCall"].get("args", {})] for p in parts if "functionCall" in p]
                entry = ["assistant", text, calls]
                kept = []
                for index, p in enumerate(parts):
                    if p.get("thought"):
                        kept.append([index, {"text": p.get("text", ""), "thought": True}])
                    if "thoughtSignature" in p:
                        kept.append([index, {"thoughtSignature": p["thoughtSignature"]}])
                if kept:
                    entry.append(kept)
                _group(messages, entry)
                continue
            for p in parts:
                if "text" in p:
                    _group(messages, ["user", p["text"]])
                elif "inlineData" in p or "fileData" in p:
                    messages.append(_media(p))
                elif "functionResponse" in p:
                    response = p["functionResponse"]
                    value = response.get("response", {})
                    shown = value["content"] if list(value) == ["content"] and isinstance(value["content"], str) \
                        else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
                    _group(messages, ["results", [[response.get("id") or response["name"], shown]]])
                else:
                    _group(messages, ["other", sorted(p)])
        system = body.get("systemInstruction")
        model = path.split("/models/", 1)[-1].split(":", 1)[0]
        return {
            "model": model,
            "streamed": path.endswith(":streamGenerateContent?alt=sse"),
            "system": "".join(p.get("text", "") for p in system["parts"]) if system else None,
            "tools": [d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])],
            "messages": messages,
        }


APIS: dict[str, Api] = {api.name: api for api in (Chat(), Responses(), Anthropic(), Gemini())}
