"""The scenarios: what the stand-in answers, turn by turn, and what the
driver and the checks expect of each client, plain and streamed.

A scenario is data (`Scenario`): the prompt, the model's turns (one per
request, written provider-neutral in `wire.Turn`), optionally a pause for
approval, and optionally its own checks of the requests. Everything else is
derived, for every client: the stop and answer the run must give, the usage
of each request (from the SDK usage model each reply carries, by the table
on `Usage`), the conversation each request must carry (the turns so far
with the tools' results), and the case list the driver runs.

To add a scenario, add it to `SCENARIOS`. Scenarios that need what the
transcript cannot hold yet (reasoning items) go under "To come" at the end:
each needs a `wire.Turn` field for its items (thinking blocks with their
signatures, redacted thinking, Gemini's `thoughtSignature` on a part,
Responses reasoning items) written by each `wire.Api.reply`, read back by
each `wire.Api.read` into the neutral messages, and an expected conversation
that carries them back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Optional

from wire import APIS, KEYS, MODELS, Call, Tokens, Turn

INSTRUCTIONS = "Answer with the tools."
TOOLS = ["get_weather", "get_time", "delete_file"]
MODES = ("plain", "streamed")
# The header the driver's second client (the one that resumes a saved run) sends.
RESUMED_HEADER = ("x-conformance-phase", "resumed")


def result(call: Call) -> str:
    """What the driver's tools answer (tools-agent/examples/conformance.rs)."""
    if call.name == "get_weather":
        return f"12°C in {call.args['city']}"
    if call.name == "get_time":
        return f"12:00 in {call.args['zone']}"
    if call.name == "delete_file":
        return f"deleted {call.args['path']}"
    raise ValueError(f"no tool {call.name}")


@dataclass(frozen=True)
class Pause:
    """The run pauses on the turn `after`: its calls of the tool that needs
    approval (`delete_file`, named in `pending` in turn order) wait. The
    driver saves the paused run as JSON; a fresh client and agent load it,
    decide about each waiting call in order (`decisions`: `("approve",)`,
    `("deny", reason)` or `("approve_with", arguments)`), and resume it."""

    after: int
    pending: tuple[str, ...]
    decisions: tuple[tuple, ...]


def denial(call: Call, reason: str) -> str:
    """What a denied call answers (`tools_agent::approval::denied`, as
    `ToolError::Denied` renders it)."""
    message = f"a person denied this call of `{call.name}`, so it did not run: {reason}"
    return json.dumps({"error": message}, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    prompt: str
    turns: tuple[Turn, ...]
    pause: Optional[Pause] = None
    clients: tuple[str, ...] = tuple(APIS)
    #: more checks of one case's requests: (api, streamed, requests) -> problems
    check: Optional[Callable[[str, bool, list[dict]], list[str]]] = None


WEATHER = Call("call_weather_oslo", "get_weather", {"city": "Oslo"})
TIME = Call("call_time_oslo", "get_time", {"zone": "Europe/Oslo"})
DELETE = Call("call_delete_log", "delete_file", {"path": "old.log"})


def _resumed_requests_carry_the_pause(api: str, streamed: bool, requests: list[dict]) -> list[str]:
    """The resumed request holds the paused turn's calls, in order, with
    both results: the approved call's and the one that ran before the pause."""
    if len(requests) < 2:
        return ["no request after the resume"]
    messages = requests[1]["read"]["messages"]
    calls = [c[1] for c in messages[1][2]] if len(messages) > 1 and messages[1][0] == "assistant" else []
    results = [r[1] for r in messages[2][1]] if len(messages) > 2 and messages[2][0] == "results" else []
    problems = []
    if calls != ["get_weather", "delete_file"]:
        problems.append(f"the resumed request's calls are {calls}")
    if results != ["12°C in Oslo", "deleted old.log"]:
        problems.append(f"the resumed request's results are {results}")
    return problems


SCENARIOS: list[Scenario] = [
    Scenario(
        "tool_round_trip", "(a) a call, its result sent back, a final answer",
        "Weather in Oslo?",
        (Turn(calls=(WEATHER,)), Turn(text="It is 12°C in Oslo."))),
    Scenario(
        "parallel_calls", "(b) text and two parallel calls in one turn, both results sent back in order",
        "Weather and time in Oslo?",
        (Turn(text="Checking both.", calls=(WEATHER, TIME)), Turn(text="12°C, and it is noon."))),
    Scenario(
        "sequential_turns", "(c) two tool turns one after the other, then the answer",
        "Weather in Oslo, then the time there?",
        (Turn(calls=(WEATHER,)), Turn(calls=(TIME,)), Turn(text="12°C at noon."))),
    Scenario(
        "truncated", "(d) the answer cut at the output limit: Truncated, never Answered",
        "Describe Oslo's weather at length.",
        (Turn(text="The weather in Oslo is", end="truncated"),)),
    Scenario(
        "truncated_in_a_call", "(d) a turn cut while writing a call: Truncated, and the cut call never runs",
        "Weather in Oslo?",
        (Turn(text="Let me check.", end="truncated",
              calls=(Call("call_cut", "get_weather", {"city": "Os"}, cut='{"city":"Os'),)),)),
    Scenario(
        "refused", "(d) a refusal (Chat `refusal`, a Responses refusal part, Anthropic `refusal`, Gemini "
        "`SAFETY`): Refused",
        "How do I pick a lock?",
        (Turn(text="I can't help with that.", end="refused"),)),
    Scenario(
        "usage_cached_reasoning", "(e) cached input (read and written) and reasoning tokens, as each SDK's "
        "usage model has them, read by the table on `Usage`",
        "Weather in Oslo?",
        (Turn(calls=(WEATHER,), tokens=Tokens(input=2048, output=300, cache_read=1536, cache_write=256,
                                                reasoning=200)),
         Turn(text="12°C.", tokens=Tokens(input=2400, output=90, cache_read=2048, reasoning=64)))),
    Scenario(
        "resume_after_approval", "(f) a call waits for approval: the paused run is saved as JSON, and a fresh "
        "client and agent load it, approve the call and resume; the next request carries both calls and "
        "both results",
        "Delete old.log and tell me the weather in Oslo.",
        (Turn(calls=(WEATHER, DELETE)), Turn(text="Deleted old.log; 12°C in Oslo.")),
        pause=Pause(after=0, pending=("delete_file",), decisions=(("approve",),)),
        check=_resumed_requests_carry_the_pause),
    Scenario(
        "resume_with_denial_and_edit", "(f) two calls wait: after the resume one runs with arguments a person "
        "edited (the transcript records them) and the other is denied, its reason the result",
        "Delete old.log and report.pdf.",
        (Turn(calls=(DELETE, Call("call_delete_report", "delete_file", {"path": "report.pdf"}))),
         Turn(text="Deleted old.log.1; report.pdf was kept.")),
        pause=Pause(after=0, pending=("delete_file", "delete_file"),
                    decisions=(("approve_with", {"path": "old.log.1"}), ("deny", "report.pdf is the only copy")))),
    Scenario(
        "gemini_call_ids", "Gemini calls that come with ids (as some of its models send them): each id goes back "
        "on its functionCall and on its functionResponse",
        "Weather and time in Oslo?",
        (Turn(calls=(WEATHER, TIME), gemini_ids=True), Turn(text="12°C, and it is noon.")),
        clients=("gemini",)),
    # To come (they need reasoning items in the transcript, issue 29 item 1):
    # - anthropic_thinking_tool_use: thinking + signature before a tool_use,
    #   sent back complete and unmodified (clients=("anthropic",));
    # - anthropic_redacted_thinking: a redacted_thinking block kept as is;
    # - gemini3_signed_parallel / gemini3_signed_sequential: thoughtSignature
    #   on the first functionCall part of each turn, sent back on that part,
    #   and after a resume on a fresh client (clients=("gemini",));
    # - responses_reasoning_items: reasoning items with encrypted_content,
    #   `include: ["reasoning.encrypted_content"]` with `store: false`, and the
    #   items sent back before their calls (clients=("responses",)).
]


def key(call: Call, api: str, turn: Turn) -> str:
    """How a request names a call: its id, or, for a Gemini call that came
    without one, its name (the client sends no made-up id back)."""
    return call.name if api == "gemini" and not turn.gemini_ids else call.id


def decided(scenario: Scenario, index: int, turn: Turn) -> list[tuple[Call, str]]:
    """The turn's calls as the transcript keeps them (with the arguments
    they were approved with), each with the result it gave."""
    pause = scenario.pause
    waiting = pause is not None and pause.after == index
    decisions = iter(pause.decisions if waiting else ())
    out = []
    for call in turn.calls:
        decision = next(decisions) if waiting and call.name in pause.pending else ("approve",)
        if decision[0] == "deny":
            out.append((call, denial(call, decision[1])))
            continue
        if decision[0] == "approve_with":
            call = Call(call.id, call.name, decision[1])
        out.append((call, result(call)))
    return out


def conversation(scenario: Scenario, api: str, upto: int) -> list:
    """The messages request `upto` must carry: the prompt, then each turn
    before it with its calls' results."""
    messages: list = [["user", scenario.prompt]]
    for index, turn in enumerate(scenario.turns[:upto]):
        calls = decided(scenario, index, turn)
        messages.append(["assistant", turn.text, [[key(c, api, turn), c.name, c.args] for c, _ in calls]])
        messages.append(["results", [[key(c, api, turn), content] for c, content in calls]])
    return messages


def case_id(scenario: Scenario, api: str, mode: str) -> str:
    return f"{scenario.name}/{api}/{mode}"


def expect(scenario: Scenario, api: str) -> dict:
    """What the driver must see of a run, for `api`'s client."""
    wire = APIS[api]
    last = scenario.turns[-1]
    stop, reason = wire.stop(last)
    if stop == "Answered" and last.calls:
        raise ValueError(f"{scenario.name}: the last turn must not call tools")
    ran = [turn for turn in scenario.turns if turn.end == "complete" and turn.calls]
    usage = [wire.expected_usage(turn.tokens) for turn in scenario.turns]
    total: dict = {}
    for counts in usage:
        for name, count in counts.items():
            total[name] = total.get(name, 0) + count
    shown = [wire.answer(turn) for turn in scenario.turns]
    return {
        "stop": stop,
        "reason": reason,
        "answer": wire.answer(last),
        "usage": usage,
        "total_usage": total,
        "requests": len(scenario.turns),
        # The prompt, each tool turn with its results, the last turn.
        "messages": 1 + 2 * len(ran) + 1,
        "tool_results": sum(len(turn.calls) for turn in ran),
        "streamed_text": "".join(shown),
    }


def cases() -> list[dict]:
    """Every scenario, client and mode the driver runs."""
    out = []
    for scenario in SCENARIOS:
        for api in scenario.clients:
            for mode in MODES:
                case = case_id(scenario, api, mode)
                pause = scenario.pause
                out.append({
                    "case": case,
                    "scenario": scenario.name,
                    "about": scenario.about,
                    "client": api,
                    "streamed": mode == "streamed",
                    "model": MODELS[api],
                    "key": KEYS[api][1].removeprefix("Bearer "),
                    # Relative to the stand-in's root: OpenAI's base URL holds /v1.
                    "base_path": f"/c/{case}" + ("/v1" if api in ("chat", "responses") else ""),
                    "prompt": scenario.prompt,
                    "instructions": INSTRUCTIONS,
                    "pause": None if pause is None else {
                        "pending": list(pause.pending),
                        "decisions": [dict(zip(("decision", "reason" if d[0] == "deny" else "arguments"), d))
                                      for d in pause.decisions]},
                    "expect": expect(scenario, api),
                })
    return out


def check(scenario: Scenario, api: str, streamed: bool, requests: list[dict]) -> list[str]:
    """What is wrong with the requests one case's client sent."""
    wire = APIS[api]
    problems = []
    if len(requests) != len(scenario.turns):
        problems.append(f"{len(requests)} requests, expected {len(scenario.turns)}")
    header, value = KEYS[api]
    for index, request in enumerate(requests):
        at = f"request {index}"
        if request["invalid"]:
            problems.append(f"{at} failed the SDK's types:\n{request['invalid']}")
            continue
        headers = request["headers"]
        if headers.get(header) != value:
            problems.append(f"{at}: {header} is {headers.get(header)!r}")
        if api == "anthropic" and headers.get("anthropic-version") != "2023-06-01":
            problems.append(f"{at}: anthropic-version is {headers.get('anthropic-version')!r}")
        resumed = scenario.pause is not None and index > scenario.pause.after
        if (headers.get(RESUMED_HEADER[0]) == RESUMED_HEADER[1]) != resumed:
            problems.append(f"{at}: {'not ' if resumed else ''}from the resuming client")
        read = request["read"]
        if read["model"] != MODELS[api]:
            problems.append(f"{at}: model {read['model']!r}")
        if read["streamed"] != streamed:
            problems.append(f"{at}: {'not ' if streamed else ''}a streamed request: {request['path']}")
        if read["system"] != INSTRUCTIONS:
            problems.append(f"{at}: instructions {read['system']!r}")
        if read["tools"] != TOOLS:
            problems.append(f"{at}: tools {read['tools']}")
        expected = conversation(scenario, api, index)
        if read["messages"] != expected:
            problems.append(f"{at}: the conversation sent is\n  {json.dumps(read['messages'], ensure_ascii=False)}"
                            f"\nexpected\n  {json.dumps(expected, ensure_ascii=False)}")
    if scenario.check and not problems:
        problems += scenario.check(api, streamed, requests)
    return problems


BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
