#!/usr/bin/env node
// The official A2A JS SDK (@a2a-js/sdk 1.3.0, pinned in package-lock.json)
// as a client of the a2a_server example (tools-a2a/examples/a2a_server.rs),
// over A2A 1.0's JSON-RPC binding: the card (name, skills, interface), a
// message sent plainly (the completed task and its answer, and GetTask),
// one streamed (task, working, the answer's artifact, completed, in that
// order), the approval flow (a "clean" prompt leaves the task
// input-required, "approve" on the task completes it; a second one, denied
// with a data part {"decisions": ...} on a stream, completes with the denial
// said), and a second answer to an answered task refused with the spec's
// error. Every request is checked to carry the A2A-Version header, and the
// card and every plain answer to read back unchanged through the SDK's types
// (no field of ours it does not know, none it reads differently).
//
//     npm ci --prefix tests/a2a
//     node tests/a2a/client.mjs   # builds and starts the example itself

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { AgentCard, Role, SendMessageResponse, Task, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

// The example, as client.py starts it: its first stdout line is its URL.
function startServer() {
  const child = spawn("cargo", ["run", "--quiet", "-p", "toolcall-a2a", "--example", "a2a_server"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const url = new Promise((resolve, reject) => {
    lines.once("line", (line) => resolve(line.trim()));
    child.once("error", reject);
    child.once("exit", (code, signal) => reject(new Error(`the example exited (${signal ?? code}) before its URL`)));
  });
  return { child, url };
}

// A message of the user's, as the SDK's types spell it (ts-proto: enums as
// numbers, a part's content as a `$case` union).
function user(text, { taskId = "", parts } = {}) {
  return {
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId,
      role: Role.ROLE_USER,
      parts: parts ?? [textPart(text)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
    tenant: "",
  };
}

function textPart(text) {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" };
}

function dataPart(value) {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" };
}

// The text of a message's (or an artifact's) text parts.
function text(holder) {
  assert.ok(holder, "no message");
  return holder.parts
    .filter((part) => part.content?.$case === "text")
    .map((part) => part.content.value)
    .join("\n");
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  assert.ok(events.length > 0, "the stream sent no event");
  return events;
}

async function main(url) {
  // The SDK's own fetch, recording each request's A2A-Version header and
  // each plain JSON-RPC answer as it came.
  const versions = [];
  const answers = [];
  const fetchImpl = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (init?.method === "POST") versions.push(headers.get("A2A-Version"));
    const response = await fetch(input, init);
    if (response.headers.get("Content-Type")?.startsWith("application/json")) {
      answers.push({ method: JSON.parse(init.body).method, body: await response.clone().json() });
    }
    return response;
  };
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
  });
  const client = await new ClientFactory(options).createFromUrl(url);

  // The card: fetched from /.well-known/agent-card.json by the factory.
  const card = await client.getAgentCard();
  assert.equal(card.name, "toolcall-example");
  assert.equal(card.version, "0.1.0");
  assert.equal(card.capabilities?.streaming, true);
  assert.equal(card.supportedInterfaces[0].protocolBinding, "JSONRPC");
  assert.equal(card.supportedInterfaces[0].protocolVersion, "1.0");
  assert.equal(new URL(card.supportedInterfaces[0].url).host, new URL(url).host);
  assert.deepEqual(
    card.skills.map((skill) => skill.id),
    ["remove_dir"],
  );
  assert.equal(card.skills[0].name, "remove_dir");
  assert.match(card.skills[0].description, /Remove a directory/);
  assert.equal(client.protocolVersion, "1.0");

  // SendMessage: the completed task, its answer as status message and artifact.
  const task = await client.sendMessage(user("Hello"));
  assert.ok(!("messageId" in task), `a message, not a task: ${JSON.stringify(task)}`);
  assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(text(task.status.message), "Hello from toolcall.");
  assert.equal(task.status.message.role, Role.ROLE_AGENT);
  assert.equal(task.artifacts.length, 1);
  assert.equal(text(task.artifacts[0]), "Hello from toolcall.");
  assert.ok(task.contextId, "the task has no context");
  // GetTask: the same task, still completed.
  const again = await client.getTask({ id: task.id, historyLength: undefined, tenant: "" });
  assert.equal(again.id, task.id);
  assert.equal(again.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(text(again.artifacts[0]), "Hello from toolcall.");

  // SendStreamingMessage: the task, working, the answer's artifact, completed.
  const events = await collect(client.sendMessageStream(user("Hello again")));
  const kinds = events.map((event) => event.payload?.$case);
  assert.deepEqual(kinds, ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
  const [first, working, artifact, completed] = events.map((event) => event.payload.value);
  assert.ok(first.id, "the first event's task has no id");
  assert.equal(working.taskId, first.id);
  assert.equal(working.status.state, TaskState.TASK_STATE_WORKING);
  assert.equal(artifact.taskId, first.id);
  assert.equal(text(artifact.artifact), "Hello from toolcall.");
  assert.equal(artifact.lastChunk, true);
  assert.equal(completed.taskId, first.id);
  assert.equal(completed.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(text(completed.status.message), "Hello from toolcall.");

  // Approval: the held call leaves the task input-required ...
  const held = await client.sendMessage(user("Please clean the build"));
  assert.equal(held.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const asked = text(held.status.message);
  assert.match(asked, /remove_dir/);
  assert.match(asked, /call-1/);
  // ... and "approve" on the task runs it.
  const done = await client.sendMessage(user("approve", { taskId: held.id }));
  assert.equal(done.id, held.id);
  assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(text(done.status.message), "Done: removed /tmp/build.");

  // Deny, streamed, with a data part naming the call.
  const asking = await collect(client.sendMessageStream(user("Clean up again")));
  const waiting = asking.filter((e) => e.payload?.$case === "statusUpdate").at(-1)?.payload.value;
  assert.equal(waiting?.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const decision = dataPart({ decisions: { "call-1": "deny" } });
  const denied = await collect(client.sendMessageStream(user("", { taskId: waiting.taskId, parts: [decision] })));
  assert.equal(denied[0].payload?.$case, "task");
  assert.equal(denied[0].payload.value.id, waiting.taskId);
  const final = denied.filter((e) => e.payload?.$case === "statusUpdate").at(-1)?.payload.value;
  assert.equal(final?.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(text(final.status.message), /denied/);

  // A second answer to the answered task is refused with the spec's error.
  await assert.rejects(client.sendMessage(user("approve", { taskId: held.id })), (error) => {
    assert.ok(error instanceof UnsupportedOperationError, `not UnsupportedOperationError: ${error}`);
    assert.equal(error.envelopeCode, -32004);
    return true;
  });

  // Nothing the server wrote is lost on the SDK: the card and each answer,
  // read by the SDK's types and written back, are what the server sent.
  const raw = await (await fetch(new URL("/.well-known/agent-card.json", url))).json();
  assert.deepEqual(AgentCard.toJSON(AgentCard.fromJSON(raw)), raw);
  const types = { SendMessage: SendMessageResponse, GetTask: Task };
  assert.deepEqual(
    answers.map((answer) => answer.method),
    ["SendMessage", "GetTask", "SendMessage", "SendMessage", "SendMessage"],
  );
  for (const { method, body } of answers.filter((answer) => "result" in answer.body)) {
    assert.deepEqual(types[method].toJSON(types[method].fromJSON(body.result)), body.result, method);
  }

  // Every JSON-RPC request said which A2A version it speaks.
  assert.ok(versions.length >= 8, `only ${versions.length} requests seen`);
  assert.ok(
    versions.every((version) => version === "1.0"),
    `A2A-Version headers: ${versions}`,
  );
}

const server = startServer();
let failed = false;
try {
  const url = await server.url;
  assert.match(url, /^http:\/\//, `the example printed ${JSON.stringify(url)}`);
  await main(url);
  console.log(
    "@a2a-js/sdk 1.3.0 client against the a2a_server example: card, send, get, stream, approve, deny, refusal: ok",
  );
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  // Killed, and waited for, however the checks ended.
  if (server.child.exitCode === null && server.child.signalCode === null) {
    const exited = once(server.child, "exit");
    server.child.kill();
    await exited;
  }
}
process.exit(failed ? 1 : 0);
