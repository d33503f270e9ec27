"""Request bodies checked against the official SDKs' own request types.

- OpenAI Chat Completions: `openai.types.chat.completion_create_params`
  (`CompletionCreateParamsNonStreaming` / `...Streaming`);
- OpenAI Responses: `openai.types.responses.response_create_params`
  (`ResponseCreateParamsNonStreaming` / `...Streaming`);
- Anthropic Messages: `anthropic.types.message_create_params`
  (`MessageCreateParamsNonStreaming` / `...Streaming`);
- Gemini generateContent: google-genai's pydantic models (`Content`, `Tool`,
  `ToolConfig`, `GenerationConfig`, `SafetySetting`), read by their camelCase
  aliases only, in a body model holding the REST request's top-level fields.

The OpenAI and Anthropic request types are TypedDicts, which pydantic lets
carry unknown keys, and whose lists are mostly typed `Iterable`. Two changes
make the check strict:

1. every TypedDict the request types reach gets
   `__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)`
   (what `pydantic.with_config` sets; found in the schema pydantic builds
   from them): pydantic reads each TypedDict's own config when
   it builds that TypedDict's schema, nested ones included, so an unknown key
   anywhere is an `extra_forbidden` error (arbitrary types: the file-upload
   members of a few unions are `IO[bytes]`, which JSON never is);
2. the adapter's core schema is then made strict where a config cannot
   reach, and validated by pydantic-core's `SchemaValidator`: pydantic
   validates an `Iterable[X]` field lazily (a `generator` schema, checked
   only when iterated), so `messages`, `input`, `tools` and every content
   list would pass unchecked: each becomes a `list` schema (for JSON, where
   every iterable is an array, `List[X]` takes exactly what `Iterable[X]`
   does, and a union's members are then told apart by their lists' items
   too); and the SDK's response models that a request union also takes
   (Anthropic's `TextBlock`, `ToolUseBlock`... as message content, models
   that allow extra keys) forbid them too. `AUDIT` counts what the final
   schemas hold: no generator, and no dict or model schema that allows an
   unknown key.

`self_check()` proves both: bodies with an unknown key nested deep in each
API's types, and with a bad item inside an `Iterable` field, must be refused.
Validation is of the raw bytes (`validate_json`), in pydantic's strict mode:
no string is taken for a number, nor a number for a string.
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any, Optional

from anthropic.types import message_create_params as anthropic_params
from google.genai import _common as genai_common
from google.genai import types as genai
from openai.types.chat import completion_create_params as chat_params
from openai.types.responses import response_create_params as responses_params
from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator, core_schema

SDKS = ("openai", "anthropic", "google-genai", "pydantic")


def versions() -> dict[str, str]:
    """The installed versions of the SDKs (and pydantic) the suite uses."""
    return {name: metadata.version(name) for name in SDKS}


def _typeddicts(schema: Any, found: set) -> set:
    """The TypedDict classes a core schema holds."""
    if isinstance(schema, list):
        for item in schema:
            _typeddicts(item, found)
    elif isinstance(schema, dict):
        if schema.get("type") == "typed-dict" and isinstance(schema.get("cls"), type):
            found.add(schema["cls"])
        for value in schema.values():
            _typeddicts(value, found)
    return found


def _forbid_extra(roots: list[Any]) -> int:
    """Give every TypedDict the request types `roots` reach (those their
    built schemas hold: which ones does not depend on their config) the
    config that forbids unknown keys; returns how many there are. The
    schemas built after it show that it reached them all (`AUDIT`)."""
    found: set = set()
    for root in roots:
        _typeddicts(TypeAdapter(root).core_schema, found)
    for cls in found:
        cls.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    return len(found)


def _strict(schema: Any) -> Any:
    """A core schema, strict: every `generator` a `list`, every typed dict
    and model forbidding extra keys."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: _strict(value) for key, value in schema.items()}
    kind = schema.get("type")
    if kind == "generator":
        keep = {key: schema[key] for key in ("ref", "metadata", "min_length", "max_length") if key in schema}
        return core_schema.list_schema(schema.get("items_schema"), **keep)
    if kind in ("typed-dict", "model-fields"):
        schema["extra_behavior"] = "forbid"
    if kind == "model":
        schema["config"] = {**schema.get("config", {}), "extra_fields_behavior": "forbid"}
    return schema


def _audit(schema: Any, counts: Optional[dict[str, int]] = None) -> dict[str, int]:
    """The typed-dict and model schemas a schema holds, those of them that
    would take an unknown key, and its generators (left unchecked)."""
    if counts is None:
        counts = dict.fromkeys(("typed dicts", "models", "loose typed dicts", "loose models", "generators"), 0)
    if isinstance(schema, list):
        for item in schema:
            _audit(item, counts)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "typed-dict":
            counts["typed dicts"] += 1
            counts["loose typed dicts"] += schema.get("extra_behavior") != "forbid"
        if kind == "model":
            counts["models"] += 1
            fields = schema.get("schema", {})
            behavior = fields.get("extra_behavior") or schema.get("config", {}).get("extra_fields_behavior")
            counts["loose models"] += behavior != "forbid"
        counts["generators"] += kind == "generator"
        for value in schema.values():
            _audit(value, counts)
    return counts




class GenerateContentRequest(genai_common.BaseModel):
    """The body of `models.generateContent` and `streamGenerateContent`
    (https://ai.google.dev/api/generate-content#request-body), of
    google-genai's own models. Its base class is the SDK's: camelCase
    aliases, unknown keys forbidden, and so are all the models it holds.
    These are the fields google-genai itself writes at the top level
    (`models._GenerateContentParameters_to_mldev` with
    `_GenerateContentConfig_to_mldev`, which moves `system_instruction`,
    `tools`, `tool_config`, `safety_settings` and `cached_content` out of
    the config and sends the rest as `generationConfig`)."""

    contents: list[genai.Content]
    tools: Optional[list[genai.Tool]] = None
    tool_config: Optional[genai.ToolConfig] = None
    safety_settings: Optional[list[genai.SafetySetting]] = None
    system_instruction: Optional[genai.Content] = None
    generation_config: Optional[genai.GenerationConfig] = None
    cached_content: Optional[str] = None


ROOTS = {
    ("chat", False): chat_params.CompletionCreateParamsNonStreaming,
    ("chat", True): chat_params.CompletionCreateParamsStreaming,
    ("responses", False): responses_params.ResponseCreateParamsNonStreaming,
    ("responses", True): responses_params.ResponseCreateParamsStreaming,
    ("anthropic", False): anthropic_params.MessageCreateParamsNonStreaming,
    ("anthropic", True): anthropic_params.MessageCreateParamsStreaming,
}
TYPEDDICTS = _forbid_extra(list(ROOTS.values()))


def _validator(tp: Any) -> tuple[SchemaValidator, dict[str, Any]]:
    built = TypeAdapter(tp).core_schema
    schema = _strict(built)
    return SchemaValidator(schema), {"as built": _audit(built), "validated": _audit(schema)}


VALIDATORS = {key: _validator(root) for key, root in ROOTS.items()}
# What each schema holds, as pydantic built it from the SDK's types with the
# TypedDicts' config (no loose typed dict: the config reached every nested
# one), and as validated (nothing loose at all). Gemini's, by the SDK's own
# config, is as validated.
AUDIT = {f"{api}{' streamed' if streamed else ''}": audit for (api, streamed), (_, audit) in VALIDATORS.items()}
GenerateContentRequest.model_rebuild(force=True)  # the SDK defers building its models
AUDIT["gemini"] = {"validated": _audit(GenerateContentRequest.__pydantic_core_schema__)}


def audit_problems() -> list[str]:
    """What the audit found loose."""
    problems = []
    for api, audit in AUDIT.items():
        validated = audit["validated"]
        loose = {key: count for key, count in validated.items() if key.startswith("loose") or key == "generators"}
        if any(loose.values()):
            problems.append(f"{api}: the validated schema is loose: {loose}")
        if "as built" in audit and audit["as built"]["loose typed dicts"]:
            problems.append(f"{api}: the TypedDicts' config did not reach every typed dict: {audit['as built']}")
    return problems


def _lazy(value: Any, path: str = "") -> Optional[str]:
    """Where a validated value still holds something pydantic has not
    checked (a lazy iterator), if anywhere."""
    if isinstance(value, dict):
        for key, item in value.items():
            found = _lazy(item, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _lazy(item, f"{path}[{index}]")
            if found:
                return found
    elif not isinstance(value, (str, int, float, bool, type(None))):
        return f"{path or '.'}: {type(value).__name__}"
    return None


def _segment(part: Any) -> str:
    """One step of an error's location; a union's long member list cut."""
    text = str(part)
    return text if len(text) <= 48 else text[:45] + "..."


def explain(error: ValidationError, limit: int = 12) -> str:
    """A validation error, deepest first: in a union, the alternative that
    got furthest is most likely the one meant, and its error the cause."""
    errors = error.errors(include_url=False)
    errors.sort(key=lambda e: (-len(e["loc"]), e["type"] != "extra_forbidden"))
    lines = [f"{len(errors)} validation errors for {error.title}, deepest first:"]
    for e in errors[:limit]:
        loc = ".".join(_segment(part) for part in e["loc"])
        shown = json.dumps(e.get("input"), default=str)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        lines.append(f"  {loc}: {e['msg']} [{e['type']}] input={shown}")
    if len(errors) > limit:
        lines.append(f"  ... and {len(errors) - limit} more")
    return "\n".join(lines)


#: The one extension of the SDKs' request types the suite allows, and only
#: for a Chat case whose server is an OpenAI-compatible one that thinks
#: (`scenarios.compatible`): `reasoning_content`, a string, on an assistant
#: message, which DeepSeek asks to have back within a tool-use turn
#: (https://api-docs.deepseek.com/guides/thinking_mode). OpenAI's own
#: `ChatCompletionAssistantMessageParam` has no such key, and its strict
#: check refuses it everywhere else. The key is checked and taken off, and
#: the rest of the body is validated strictly, as any other.
COMPATIBLE = "reasoning_content"


def _compatible(raw: bytes) -> tuple[Optional[bytes], Optional[str]]:
    """The body without its assistant messages' `reasoning_content`, or why
    it is not valid there."""
    try:
        body = json.loads(raw)
    except ValueError as error:
        return None, f"not JSON: {error}"
    messages = body.get("messages") if isinstance(body, dict) else None
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and COMPATIBLE in message:
            if message.get("role") != "assistant":
                return None, f"messages.{index}: {COMPATIBLE} on a {message.get('role')!r} message"
            if not isinstance(message[COMPATIBLE], str):
                return None, f"messages.{index}.{COMPATIBLE}: not a string"
            del message[COMPATIBLE]
    return json.dumps(body).encode(), None


def validate(api: str, raw: bytes, streamed: bool, compatible: bool = False) -> Optional[str]:
    """None if the body is valid for `api` ("chat", "responses",
    "anthropic", "gemini"), else the reason; `compatible`: a Chat body to
    an OpenAI-compatible server, which may carry `COMPATIBLE`."""
    if compatible and api == "chat":
        raw, problem = _compatible(raw)
        if problem:
            return f"{problem} (the compatible-server extension)"
    try:
        if api == "gemini":
            GenerateContentRequest.model_validate_json(raw, strict=True, by_alias=True, by_name=False)
            return None
        value = VALIDATORS[(api, streamed)][0].validate_json(raw, strict=True)
    except ValidationError as error:
        return explain(error)
    lazy = _lazy(value)
    return f"left unchecked by pydantic: {lazy}" if lazy else None


def self_check() -> list[str]:
    """Bodies each API's types must refuse (an unknown key, nested deep; a bad
    item inside a list typed `Iterable`) and accept; the problems found."""
    tool = {"name": "get_weather", "description": "d", "parameters": {"type": "object", "properties": {}}}
    cases = [
        # (api, streamed, body, valid)
        ("chat", False, {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                         "tools": [{"type": "function", "function": tool}]}, True),
        ("chat", True, {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                        "stream_options": {"include_usage": True}}, True),
        ("chat", False, {"model": "m", "messages": [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}", "unknown": 1}}]}]}, False),
        ("chat", False, {"model": "m", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "hi", "unknown": 1}]}]}, False),
        ("chat", True, {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                        "stream_options": {"include_usage": True, "unknown": 1}}, False),
        ("chat", False, {"model": "m", "messages": [{"role": "user", "content": 7}]}, False),
        ("responses", False, {"model": "m", "input": [
            {"type": "function_call_output", "call_id": "c", "output": "x"}], "store": False}, True),
        ("responses", False, {"model": "m", "input": [
            {"type": "function_call_output", "call_id": "c", "output": "x", "unknown": 1}]}, False),
        ("responses", False, {"model": "m", "input": [{"role": "user", "content": [
            {"type": "input_text", "text": "hi", "unknown": 1}]}]}, False),
        ("responses", False, {"model": "m", "input": "hi", "tools": [
            {"type": "function", "name": "f", "parameters": {}, "strict": False, "unknown": 1}]}, False),
        ("anthropic", False, {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
                              "tools": [{"name": "f", "input_schema": {"type": "object"}}]}, True),
        ("anthropic", False, {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x", "unknown": 1}]}]}]},
         False),
        ("anthropic", False, {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
                              "tool_choice": {"type": "auto", "unknown": True}}, False),
        # A block the response models (which allow extra keys) would take.
        ("anthropic", False, {"model": "m", "max_tokens": 10, "messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "f", "input": {}, "unknown": 1}]}]}, False),
        ("anthropic", False, {"model": "m", "max_tokens": "10", "messages": [{"role": "user", "content": "hi"}]},
         False),
        ("gemini", False, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                           "systemInstruction": {"parts": [{"text": "s"}]},
                           "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}}, True),
        ("gemini", False, {"contents": [{"role": "model", "parts": [
            {"functionCall": {"name": "f", "args": {}, "unknown": 1}}]}]}, False),
        ("gemini", False, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                           "generationConfig": {"max_output_tokens": 5}}, False),
        ("gemini", False, {"contents": [], "unknown": 1}, False),
        # Reasoning as each API takes it back, and a key too many in it.
        ("anthropic", False, {"model": "m", "max_tokens": 10, "messages": [{"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "redacted_thinking", "data": "d"},
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": [
                {"type": "web_search_result", "url": "u", "title": "t", "encrypted_content": "e"}]}]}]}, True),
        ("anthropic", False, {"model": "m", "max_tokens": 10, "messages": [{"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "signature": "s", "citations": None}]}]}, False),
        ("responses", False, {"model": "m", "input": [{"type": "reasoning", "id": "rs", "summary": [
            {"type": "summary_text", "text": "t"}], "encrypted_content": "e"}]}, True),
        ("responses", False, {"model": "m", "input": [{"type": "reasoning", "id": "rs", "summary": [
            {"type": "summary_text", "text": "t", "unknown": 1}]}]}, False),
        ("gemini", False, {"contents": [{"role": "model", "parts": [
            {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"},
            {"text": "t", "thought": True}]}]}, True),
        ("gemini", False, {"contents": [{"role": "model", "parts": [
            {"text": "", "thoughtSignature": "not base64!"}]}]}, False),
    ]
    # The compatible-server extension: `reasoning_content` on an assistant
    # message only, a string; refused by OpenAI's own types.
    thinking = {"model": "m", "messages": [{"role": "user", "content": "hi"}, {
        "role": "assistant", "content": "", "reasoning_content": "r", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}
    compatible_cases = [
        (thinking, False, False),
        (thinking, True, True),
        ({**thinking, "messages": [{"role": "user", "content": "hi", "reasoning_content": "r"}]}, True, False),
        ({**thinking, "messages": [{"role": "assistant", "content": "", "reasoning_content": 1}]}, True, False),
        ({**thinking, "messages": [{"role": "assistant", "content": "", "reasoning_content": "r", "unknown": 1}]},
         True, False),
    ]
    problems = audit_problems()
    for body, compatible, valid in compatible_cases:
        error = validate("chat", json.dumps(body).encode(), False, compatible)
        if valid == bool(error):
            problems.append(f"chat{' (compatible)' if compatible else ''}: a body was "
                            f"{'refused' if error else 'accepted'}: {json.dumps(body)}\n{error or ''}")
    for api, streamed, body, valid in cases:
        error = validate(api, json.dumps(body).encode(), streamed)
        if valid and error:
            problems.append(f"{api}: a valid body was refused: {json.dumps(body)}\n{error}")
        if not valid and not error:
            problems.append(f"{api}: an invalid body was accepted: {json.dumps(body)}")
    return problems


if __name__ == "__main__":
    print(json.dumps(versions()))
    print(f"TypedDicts made to forbid unknown keys: {TYPEDDICTS}")
    for api, audit in AUDIT.items():
        print(f"{api}: {audit}")
    found = self_check()
    print("\n".join(found) or "self-check: every bad body refused, every good one taken")
    raise SystemExit(1 if found else 0)
