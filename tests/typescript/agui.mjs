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
// (no error, no warning). Without a URL it builds and starts the example.

import { HttpAgent } from "@ag-ui/client";

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

const base = process.argv[2] ?? (await startExample("chat_ui")).url;
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

check(complaints.length === 0, `the client complained: ${complaints.join("\n")}`);
console.log(`agui: ${seen.length} events; ${call.function.name} ${call.function.arguments} held as interrupt ${interrupt.id}`);
process.exit(0);
