#!/usr/bin/env node
// The chat_ui example's AG-UI endpoint (POST /api/agui) against the official
// AG-UI client, @ag-ui/client's HttpAgent (pinned in package-lock.json):
//
//     npm ci --prefix tests/typescript
//     node tests/typescript/agui.mjs [URL]
//
// Asked for the weather, the offline model calls get_weather, which needs
// approval: checked are what the client sent (its RunAgentInput), what it
// assembled from the events (the assistant message holding the call with
// its arguments, no other message), the run's interrupt naming the held
// call, and that the client's event verification and schemas raised nothing
// (no error, no warning). Then the interrupt is answered as AG-UI resumes:
// a second runAgent on the thread whose `resume` entries (built with the
// client's buildResumeArray) approve the call: the call runs, its result
// (its JSON, and its chart as an image part) and the answer arrive, its
// artifact becomes the agent's state, the run finishes with success and the thread waits
// on nothing. A second thread is resumed with a denial: the model reads the
// reason and says so. Without a URL it builds and starts the example.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { HttpAgent, buildResumeArray } from "@ag-ui/client";

import { check, startExample } from "./support.mjs";

// The client reports what it drops or repairs on the console: there must be none.
const complaints = [];
for (const level of ["warn", "error"]) {
  const original = console[level];
  console[level] = (...args) => {
    complaints.push(args.map(String).join(" "));
    original(...args);
  };
}

// Its threads in a new file, so a thread of an earlier run is not continued.
const chats = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agui-")), "chats.db");
const base = process.argv[2] ?? (await startExample("chat_ui", { env: { CHAT_DB: chats } })).url;
const sent = [];
const agent = new HttpAgent({
  url: new URL("/api/agui", base).href,
  threadId: "thread-agui",
  initialMessages: [{ id: "user-1", role: "user", content: "What is the weather in Paris?" }],
  // The client's own fetch, recording each request body.
  fetch: (url, init) => {
    sent.push(JSON.parse(init.body));
    return fetch(url, init);
  },
});

const seen = [];
let finished = null;
let failed = null;
const { newMessages } = await agent.runAgent(
  { runId: "run-agui-1" },
  {
    onEvent: ({ event }) => {
      seen.push(event.type);
    },
    onRunFinishedEvent: (params) => {
      finished = params;
    },
    onRunFailed: ({ error }) => {
      failed = error;
    },
  },
);

check(failed === null, `the run failed in the client: ${failed}`);
check(sent.length === 1, `${sent.length} requests`);
check(sent[0].threadId === "thread-agui" && sent[0].runId === "run-agui-1", `input ids: ${JSON.stringify(sent[0])}`);
check(sent[0].messages.at(-1).content === "What is the weather in Paris?", `input: ${JSON.stringify(sent[0])}`);
check(seen[0] === "RUN_STARTED" && seen.at(-1) === "RUN_FINISHED", `events: ${seen}`);

check(newMessages.length === 1, `new messages: ${JSON.stringify(newMessages)}`);
const [assistant] = newMessages;
check(assistant.role === "assistant" && assistant.toolCalls?.length === 1, `message: ${JSON.stringify(assistant)}`);
const [call] = assistant.toolCalls;
check(call.function.name === "get_weather", `call: ${JSON.stringify(call)}`);
check(JSON.stringify(JSON.parse(call.function.arguments)) === '{"city":"Paris"}', `arguments: ${call.function.arguments}`);

check(finished?.outcome === "interrupt", `outcome: ${JSON.stringify(finished?.outcome)}`);
check(finished.interrupts.length === 1, `interrupts: ${JSON.stringify(finished.interrupts)}`);
const [interrupt] = finished.interrupts;
check(interrupt.toolCallId === call.id && interrupt.id === call.id, `interrupt: ${JSON.stringify(interrupt)}`);
check(agent.pendingInterrupts.length === 1 && agent.pendingInterrupts[0].toolCallId === call.id, "pending interrupts");
// The held call never ran: no tool message.
check(!agent.messages.some((message) => message.role === "tool"), `messages: ${JSON.stringify(agent.messages)}`);

const heldEvents = seen.length;

// Approve: the next run on the thread answers the interrupt.
const approved = await resumeRun(agent, "run-agui-2", { approved: true });
check(sent.length === 2, `${sent.length} requests`);
check(sent[1].threadId === "thread-agui" && sent[1].runId === "run-agui-2", `resume ids: ${JSON.stringify(sent[1])}`);
check(
  JSON.stringify(sent[1].resume) ===
    JSON.stringify([{ interruptId: call.id, status: "resolved", payload: { approved: true } }]),
  `resume: ${JSON.stringify(sent[1].resume)}`,
);
const ran = approved.newMessages.find((message) => message.role === "tool");
check(ran?.toolCallId === call.id && textOf(ran.content).includes('"sky":"sunny"'), `tool message: ${JSON.stringify(ran)}`);
// The tool's chart is a part of its result (AG-UI content parts), its
// artifact the agent's state (a STATE_SNAPSHOT the client applied).
const chart = Array.isArray(ran.content) && ran.content.find((part) => part.type === "image");
check(
  chart?.source?.type === "data" && chart.source.mimeType === "image/png" && chart.source.value.startsWith("iVBORw0KGgo"),
  `tool parts: ${JSON.stringify(ran.content).slice(0, 300)}`,
);
check(
  agent.state?.get_weather?.city === "Paris" && agent.state.get_weather.hours?.length === 4,
  `state: ${JSON.stringify(agent.state)}`,
);
const said = approved.newMessages.filter((message) => message.role === "assistant" && message.content).at(-1);
check(said?.content === "Right now it is 18°C and sunny in Paris.", `answer: ${JSON.stringify(approved.newMessages)}`);
// The held call is in the thread once: the resumed run sent its result only.
const holding = agent.messages.filter((message) => message.toolCalls?.some((held) => held.id === call.id));
check(holding.length === 1 && holding[0].toolCalls.filter((held) => held.id === call.id).length === 1, "the call twice");

// Deny, on a thread of its own: the model reads the reason.
const denyAgent = new HttpAgent({
  url: new URL("/api/agui", base).href,
  threadId: "thread-agui-deny",
  initialMessages: [{ id: "user-d1", role: "user", content: "What is the weather in Paris?" }],
});
let deniedFinish = null;
await denyAgent.runAgent({ runId: "run-agui-d1" }, { onRunFinishedEvent: (params) => (deniedFinish = params) });
check(deniedFinish?.outcome === "interrupt" && denyAgent.pendingInterrupts.length === 1, "the deny thread is not held");
const deniedCall = denyAgent.pendingInterrupts[0].toolCallId;
const denied = await resumeRun(denyAgent, "run-agui-d2", { approved: false, reason: "not now" });
const refused = denied.newMessages.find((message) => message.role === "tool");
check(
  refused?.toolCallId === deniedCall && refused.content.includes("denied") && refused.content.includes("not now"),
  `denied tool message: ${JSON.stringify(refused)}`,
);
const told = denied.newMessages.filter((message) => message.role === "assistant" && message.content).at(-1);
check(told?.content.includes("declined"), `deny answer: ${JSON.stringify(denied.newMessages)}`);

check(complaints.length === 0, `the client complained: ${complaints.join("\n")}`);
console.log(
  `agui: ${heldEvents} events; ${call.function.name} ${call.function.arguments} held as interrupt ${interrupt.id}; ` +
    `approved: "${said.content}"; denied: "${told.content}"`,
);
process.exit(0);

// The text of a message's content: the string, or its text parts.
function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((part) => part.type === "text").map((part) => part.text).join("");
}

// A second runAgent on the agent's thread, answering its one open
// interrupt with `payload`: checks the run finished with success and the
// thread waits on nothing; gives runAgent's result.
async function resumeRun(on, runId, payload) {
  const [open] = on.pendingInterrupts;
  const resume = buildResumeArray(on.pendingInterrupts, { [open.id]: { status: "resolved", payload } });
  let finish = null;
  let error = null;
  const types = [];
  const result = await on.runAgent(
    { runId, resume },
    {
      onEvent: ({ event }) => types.push(event.type),
      onRunFinishedEvent: (params) => (finish = params),
      onRunFailed: ({ error: failure }) => (error = failure),
    },
  );
  check(error === null, `the resumed run failed in the client: ${error}`);
  check(types[0] === "RUN_STARTED" && types.at(-1) === "RUN_FINISHED", `resumed events: ${types}`);
  check(!types.includes("TOOL_CALL_START") || types.indexOf("TOOL_CALL_RESULT") < types.indexOf("TOOL_CALL_START"), `resumed events: ${types}`);
  check(finish?.outcome === "success", `resumed outcome: ${JSON.stringify(finish?.outcome)}`);
  check(on.pendingInterrupts.length === 0, `still pending: ${JSON.stringify(on.pendingInterrupts)}`);
  return result;
}
