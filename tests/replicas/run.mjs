// examples/chat_ui/main.rs as a deployment runs it: three replicas on one
// PostgreSQL, behind HAProxy (Debian's haproxy, round-robin, on loopback),
// talked to over the chat's HTTP API exactly as useChat does (POST
// /api/chat, GET /api/chat/{id}, GET /api/chat/{id}/stream), a replica
// picked by its own port or any of them through the balancer's:
//
//   i    a call paused on replica A and approved on replica B runs once, and
//        the run's answer comes back;
//   ii   two approvals of one paused call sent at once to two replicas: one
//        is 200, the other 409, and the call runs once (TRIALS trials, 50);
//   iii  a stream started on A and asked again on B (GET /stream, a page
//        reloaded onto another replica): B sends what A sends, chunk for
//        chunk (the SSE data lines; keep-alive comments aside);
//   iv   kill -9 of the replica running a stream (the answer after an
//        approved call): within the lease (15 s) and a margin, another
//        replica shows the chat with its question and no run going (GET
//        /stream 204, or a stream that ends), takes a new question, and the
//        call ran once;
//   v    the browser flows (tests/browser/chat.mjs's approve and deny, in
//        Debian's chromium) through the balancer.
//
//   node tests/replicas/run.mjs path/to/chat_ui
//
// The binary is the example built with the features ui and postgres (CI:
// `cargo build --workspace --all-features --example chat_ui`, the test
// command's build); this script builds nothing. PostgreSQL is a throwaway
// cluster (scripts/postgres.sh, in a temporary folder) unless
// CHAT_DATABASE_URL names one. Scenarios i, ii and v run on three replicas
// with the example's offline model (its ScriptedServer, each replica its
// own); iii and iv need a stream that lasts a few seconds, which that model
// does not make (it answers at once), so they run on three more replicas
// whose model is one in this script, shared as a provider would be: an
// OpenAI Chat Completions server on loopback that streams a long answer in
// pieces, SLOW_MS (100) apart. Each replica prints `get_weather ran: KEY`
// when its tool runs: the runs of a call are counted across replicas.
//
// SCENARIOS=i,iii runs a selection. A summary line per scenario; exit 1 if
// any failed. Every process started here is killed however the script ends.

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const QUESTION = "What is the weather in Paris?";
const ANSWER = "Right now it is 18°C and sunny in Paris.";
// The question the script's model answers slowly, in text alone (iii).
const SLOW_QUESTION = "Tell me a long story, slowly.";
// The question whose call, approved, the model answers slowly (iv).
const SLOW_WEATHER = "What is the weather in Paris? Take your time.";
const TRIALS = Number(process.env.TRIALS ?? 50);
const SLOW_MS = Number(process.env.SLOW_MS ?? 100);
const SLOW_PIECES = 40;
// The longest a lease may hold a dead replica's chat, and a margin.
const LEASE_MS = 15_000;
const MARGIN_MS = 10_000;
// A guard against a hang, not a measure.
const WAIT_MS = 30_000;
const SCENARIOS = (process.env.SCENARIOS ?? "i,ii,iii,iv,v").split(",").map((s) => s.trim());

// ---------------------------------------------------------------------------
// Processes, cleaned up however the script ends.

const cleanups = [];
process.on("exit", () => {
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch {}
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(1));

class Failure extends Error {}
function check(condition, what) {
  if (!condition) throw new Failure(what);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function within(promise, what, ms = WAIT_MS) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Failure(`no ${what} in ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// A throwaway PostgreSQL (scripts/postgres.sh), stopped and removed at exit.
function startPostgres() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "replicas-pg-"));
  cleanups.push(() => {
    try {
      execFileSync(path.join(ROOT, "scripts/postgres.sh"), ["stop", dir], { stdio: "ignore" });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  const out = execFileSync(path.join(ROOT, "scripts/postgres.sh"), ["start", dir], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return out.trim().split("\n").at(-1);
}

// The tool's runs, by call id: [replica name, ...].
const toolRuns = new Map();
// Runs are counted by chat and call (call ids repeat from chat to chat):
// the example prints each run's idempotency key, `{owner}/{chat}:{n}:{call}`.
const runsOf = (chat, call) => toolRuns.get(`${chat}/${call}`)?.length ?? 0;

// One replica of the example: `name`, its `url`, its `child`; its stderr's
// last lines for a failure's message.
async function startReplica(binary, name, env) {
  const child = spawn(binary, [], {
    cwd: ROOT,
    env: { ...env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  const replica = { name, child, url: undefined, stderr: [] };
  createInterface({ input: child.stderr }).on("line", (line) => {
    replica.stderr.push(line);
    if (replica.stderr.length > 40) replica.stderr.shift();
  });
  const listening = new Promise((resolve) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const url = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line.trim())?.[1];
      if (url) resolve(url);
      const key = /^get_weather ran: [^/]*\/(.+):\d+:(\S+)$/.exec(line.trim());
      const ran = key && `${key[1]}/${key[2]}`;
      if (ran) toolRuns.set(ran, [...(toolRuns.get(ran) ?? []), name]);
    });
  });
  const exited = new Promise((_, reject) =>
    child.once("exit", (code, signal) =>
      reject(new Failure(`replica ${name} exited (${signal ?? code}) before listening:\n${replica.stderr.join("\n")}`)),
    ),
  );
  replica.url = await within(Promise.race([listening, exited]), `listening line from replica ${name}`);
  return replica;
}

// HAProxy in front of `replicas`: round-robin per request, timeouts longer
// than a stream's quiet gaps (the replicas send a keep-alive comment every
// 15 s). Resolves to its URL once it answers.
async function startBalancer(replicas) {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "replicas-haproxy-"));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, "haproxy.cfg");
  fs.writeFileSync(
    config,
    [
      "global",
      "    maxconn 1024",
      "defaults",
      "    mode http",
      "    timeout connect 2s",
      "    timeout client 60s",
      "    timeout server 60s",
      "    timeout tunnel 60s",
      "    timeout http-keep-alive 10s",
      "frontend chat",
      `    bind 127.0.0.1:${port}`,
      "    default_backend replicas",
      "backend replicas",
      "    balance roundrobin",
      ...replicas.map((replica) => `    server ${replica.name} ${new URL(replica.url).host}`),
      "",
    ].join("\n"),
  );
  const log = [];
  // Debian's, in /usr/sbin (not on every user's PATH), or HAPROXY.
  const haproxy = process.env.HAPROXY ?? (fs.existsSync("/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : "haproxy");
  const child = spawn(haproxy, ["-f", config, "-db"], { stdio: ["ignore", "pipe", "pipe"] });
  cleanups.push(() => child.kill("SIGKILL"));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => log.push(line));
  }
  child.on("error", (error) => log.push(`${error}`));
  const url = `http://127.0.0.1:${port}`;
  await within(
    (async () => {
      for (;;) {
        check(child.exitCode === null, `haproxy exited (${child.exitCode}):\n${log.join("\n")}`);
        const up = await fetch(`${url}/`).then((response) => response.ok, () => false);
        if (up) return;
        await sleep(50);
      }
    })(),
    "answer from haproxy",
  );
  return { url, child };
}

// ---------------------------------------------------------------------------
// The slow model: OpenAI Chat Completions, streamed, on loopback. A question
// calls get_weather {"city":"Paris"} (the arguments in pieces, the call's id
// new in this server); SLOW_QUESTION is answered in text alone, slowly; a
// tool's result is answered with the weather, slowly when the chat's
// question was SLOW_WEATHER; each answer ends with the typed answer
// (final_answer), as the example's offline model does.

async function startModel() {
  let calls = 0;
  const id = "chatcmpl-replicas";
  const frame = (delta, finish = null) =>
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created: 1694268190,
      model: "gpt-4o-mini",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  const usage = JSON.stringify({
    id,
    object: "chat.completion.chunk",
    created: 1694268190,
    model: "gpt-4o-mini",
    choices: [],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
  const server = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const piece of req) chunks.push(piece);
      const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (req.method !== "POST" || !req.url.endsWith("/chat/completions") || request.stream !== true) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "this model streams chat completions only" } }));
        return;
      }
      let gone = false;
      res.on("close", () => (gone = true));
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (data) => gone || res.write(`data: ${data}\n\n`);
      const slowly = async (text) => {
        const words = text.split(/(?<= )/);
        const size = Math.ceil(words.length / SLOW_PIECES);
        for (let at = 0; at < words.length && !gone; at += size) {
          send(frame({ content: words.slice(at, at + size).join("") }));
          await sleep(SLOW_MS);
        }
      };
      const answer = (forecast) =>
        send(
          frame({
            tool_calls: [
              { index: 0, id: `call_answer_model_${++calls}`, type: "function", function: { name: "final_answer", arguments: JSON.stringify(forecast) } },
            ],
          }),
        );
      send(frame({ role: "assistant", content: "" }));
      const question = request.messages.find((message) => message.role === "user")?.content;
      const asked = typeof question === "string" ? question : JSON.stringify(question);
      let last = request.messages.at(-1);
      if (last.role === "user" && Array.isArray(last.content)) last = request.messages.at(-2);
      if (last.role === "tool") {
        const now = JSON.parse(last.content.split("\n")[0]);
        const text = `Right now it is ${now.celsius}°C and ${now.sky} in ${now.city}.`;
        if (asked.includes(SLOW_WEATHER)) {
          await slowly(`${text} ${"And the hours after that are much the same, mild and clear. ".repeat(8)}`);
        } else {
          send(frame({ content: text }));
        }
        answer({ ...now, summary: text });
      } else if (asked.includes(SLOW_QUESTION)) {
        await slowly("Once upon a time there was a city where the weather never changed. ".repeat(10));
        answer({ city: "Paris", celsius: null, sky: null, summary: "A story." });
      } else {
        const call = `call_weather_model_${++calls}`;
        send(frame({ tool_calls: [{ index: 0, id: call, type: "function", function: { name: "get_weather", arguments: "" } }] }));
        send(frame({ tool_calls: [{ index: 0, function: { arguments: '{"city":"P' } }] }));
        send(frame({ tool_calls: [{ index: 0, function: { arguments: 'aris"}' } }] }));
      }
      send(frame({}, "tool_calls"));
      send(usage);
      send("[DONE]");
      res.end();
    } catch (error) {
      res.destroy(error);
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => server.closeAllConnections());
  return { url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() };
}

// ---------------------------------------------------------------------------
// The chat's HTTP API, as useChat calls it.

let chats = 0;
const newChat = (tag) => `replicas-${tag}-${process.pid}-${++chats}`;

const userMessage = (text) => ({ id: "u1", role: "user", parts: [{ type: "text", text }] });

// The page's messages after Approve (as addToolApprovalResponse leaves the
// assistant message): the question, the assistant message with the call in
// `approval-responded`.
function approvalBody(chat, question, asked, approved = true) {
  const message = asked.messageId ?? "a1";
  return {
    id: chat,
    trigger: "submit-message",
    messageId: message,
    messages: [
      userMessage(question),
      {
        id: message,
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-get_weather",
            toolCallId: asked.call,
            state: "approval-responded",
            input: asked.input ?? { city: "Paris" },
            approval: { id: asked.approvalId, approved },
          },
        ],
      },
    ],
  };
}

const post = (url, body) =>
  fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

// An SSE response read to its end: its data lines (keep-alive comments and
// other fields aside), `onData` called with each as it comes.
async function readSse(response, onData = () => {}) {
  const data = [];
  const decoder = new TextDecoder();
  let pending = "";
  for await (const bytes of response.body) {
    pending += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = pending.indexOf("\n\n")) !== -1) {
      const event = pending.slice(0, end);
      pending = pending.slice(end + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const value = line.slice("data:".length).replace(/^ /, "");
        data.push(value);
        onData(value, data);
      }
    }
  }
  return data;
}

const parsed = (data) => data.filter((value) => value !== "[DONE]").map((value) => JSON.parse(value));

async function bodyText(response) {
  return response.body ? await response.text() : "";
}

// Ask `question` in `chat` at `url`, read the stream to its end: the held
// call (id, approval id, input), the assistant message's id, the chunks.
async function ask(url, chat, question) {
  const response = await post(url, { id: chat, trigger: "submit-message", messages: [userMessage(question)] });
  if (response.status !== 200) {
    throw new Failure(`asking at ${url}: ${response.status} ${await bodyText(response)}`);
  }
  const chunks = parsed(await within(readSse(response), `end of the question's stream at ${url}`));
  const request = chunks.find((chunk) => chunk.type === "tool-approval-request");
  check(request, `the question's stream at ${url} asks for no approval: ${JSON.stringify(chunks)}`);
  const input = chunks.find((chunk) => chunk.type === "tool-input-available" && chunk.toolCallId === request.toolCallId);
  const finish = chunks.at(-1);
  check(
    finish?.type === "finish" && finish.finishReason === "tool-calls",
    `the question's run at ${url} ends paused on the call: ${JSON.stringify(finish)}`,
  );
  return {
    call: request.toolCallId,
    approvalId: request.approvalId,
    input: input?.input,
    messageId: chunks.find((chunk) => chunk.type === "start")?.messageId,
    chunks,
  };
}

// The chat's stored messages (GET /api/chat/{id}).
async function messagesOf(url, chat) {
  const response = await fetch(`${url}/api/chat/${encodeURIComponent(chat)}`);
  const text = await response.text();
  check(response.status === 200, `GET /api/chat/${chat} at ${url}: ${response.status} ${text}`);
  const page = JSON.parse(text);
  return Array.isArray(page) ? page : page.messages;
}

const textOf = (messages) =>
  messages.flatMap((message) => (message.parts ?? []).filter((part) => part.type === "text").map((part) => part.text));

// Let the replicas' stdout lines about tool runs come in.
const settle = () => sleep(300);

// ---------------------------------------------------------------------------
// The scenarios. Each returns its summary line, or throws.

// i: paused on A, approved on B: the tool runs once, the answer comes back.
async function pausedOnAApprovedOnB([a, b]) {
  const chat = newChat("i");
  const asked = await ask(a.url, chat, QUESTION);
  const response = await post(b.url, approvalBody(chat, QUESTION, asked));
  const status = response.status;
  const chunks = status === 200 ? parsed(await within(readSse(response), "end of the approval's stream")) : [];
  const text = status === 200 ? "" : await bodyText(response);
  await settle();
  const runs = runsOf(chat, asked.call);
  const summary = `approval on ${b.name}: ${status}; tool runs of ${asked.call}: ${runs} (${toolRuns.get(`${chat}/${asked.call}`) ?? []})`;
  check(status === 200, `i: the approval on ${b.name} of the call held on ${a.name} answered ${status} ${text}; ${summary}`);
  const said = chunks.filter((chunk) => chunk.type === "text-delta").map((chunk) => chunk.delta).join("");
  const output = chunks.find((chunk) => chunk.type === "tool-output-available" && chunk.toolCallId === asked.call);
  check(output?.output?.city === "Paris", `i: the approval's stream gives the tool's output: ${JSON.stringify(chunks)}`);
  check(said.includes(ANSWER), `i: the approval's stream gives the answer: ${JSON.stringify(said)}`);
  check(chunks.at(-1)?.type === "finish", `i: the approval's stream finishes: ${JSON.stringify(chunks.at(-1))}`);
  check(runs === 1, `i: the tool ran ${runs} times, not once; ${summary}`);
  return `paused on ${a.name}, ${summary}, answer back`;
}

// ii: two approvals of one call at once, through two replicas: one 200, one
// 409, one run; TRIALS times.
async function twoApprovalsAtOnce(replicas) {
  const tally = { trials: 0, ok: 0, statuses: {}, runs: 0, twice: 0, neither: 0, failures: [] };
  for (let trial = 0; trial < TRIALS; trial++) {
    const [x, y] = [replicas[trial % 3], replicas[(trial + 1) % 3]];
    const asker = replicas[(trial + 2) % 3];
    const chat = newChat("ii");
    tally.trials += 1;
    try {
      const asked = await ask(asker.url, chat, QUESTION);
      const body = approvalBody(chat, QUESTION, asked);
      const answers = await Promise.all(
        [x, y].map(async (replica) => {
          const response = await post(replica.url, body);
          // Each read to its end: a run the 200 started is over when this is.
          if (response.status === 200) await within(readSse(response), `end of an approval's stream at ${replica.name}`);
          else await bodyText(response);
          return response.status;
        }),
      );
      await settle();
      const runs = runsOf(chat, asked.call);
      tally.runs += runs;
      for (const status of answers) tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      if (runs > 1) tally.twice += 1;
      if (runs === 0) tally.neither += 1;
      const sorted = [...answers].sort().join(",");
      if (sorted === "200,409" && runs === 1) tally.ok += 1;
      else tally.failures.push(`trial ${trial + 1} (${x.name}+${y.name}): statuses ${answers.join("/")}, tool runs ${runs}`);
    } catch (error) {
      tally.failures.push(`trial ${trial + 1}: ${error.message}`);
    }
  }
  const statuses = Object.entries(tally.statuses)
    .map(([status, count]) => `${status}×${count}`)
    .join(" ");
  const summary =
    `${tally.trials} trials, ${tally.ok} as specified; statuses ${statuses}; tool runs ${tally.runs} ` +
    `(${tally.twice} trials ran it twice, ${tally.neither} not at all)`;
  check(
    tally.failures.length === 0,
    `ii: ${summary}\n      ${tally.failures.slice(0, 5).join("\n      ")}${tally.failures.length > 5 ? `\n      ... ${tally.failures.length - 5} more` : ""}`,
  );
  return summary;
}

// iii: a slow stream on A, asked again on B: the same data lines.
async function reloadOnAnotherReplica([a, b]) {
  const chat = newChat("iii");
  const response = await post(a.url, { id: chat, trigger: "submit-message", messages: [userMessage(SLOW_QUESTION)] });
  if (response.status !== 200) throw new Failure(`iii: asking on ${a.name}: ${response.status} ${await bodyText(response)}`);
  let going;
  const started = new Promise((resolve) => (going = resolve));
  let aDone = false;
  const onA = within(
    readSse(response, (value, data) => {
      if (data.filter((line) => line.includes('"text-delta"')).length >= 3) going();
    }),
    `end of the slow stream on ${a.name}`,
  ).finally(() => (aDone = true));
  await within(Promise.race([started, onA]), `three pieces of the slow answer on ${a.name}`);
  check(!aDone, `iii: the stream on ${a.name} ended before it could be asked again`);
  const again = await fetch(`${b.url}/api/chat/${encodeURIComponent(chat)}/stream`);
  const bStatus = again.status;
  const fromB = bStatus === 200 ? await within(readSse(again), `end of the resumed stream on ${b.name}`) : [];
  if (bStatus !== 200) await bodyText(again);
  const fromA = await onA;
  const summary = `${a.name} sent ${fromA.length} data lines; GET /stream on ${b.name} mid-stream: ${bStatus}, ${fromB.length} data lines`;
  check(bStatus === 200, `iii: ${summary} (${b.name} has no run going to resume)`);
  const first = fromA.findIndex((line, at) => line !== fromB[at]);
  check(
    first === -1 && fromA.length === fromB.length,
    `iii: ${summary}; they differ at line ${first}: ${JSON.stringify(fromA[first])} vs ${JSON.stringify(fromB[first])}`,
  );
  check(fromA.at(-1) === "[DONE]", `iii: the stream ends with [DONE]: ${fromA.at(-1)}`);
  return `${summary}, the same chunk for chunk`;
}

// iv: kill -9 of the replica streaming the answer after an approved call.
async function killTheStreamingReplica([a, b, c]) {
  const chat = newChat("iv");
  const asked = await ask(b.url, chat, SLOW_WEATHER);
  const response = await post(a.url, approvalBody(chat, SLOW_WEATHER, asked));
  if (response.status !== 200) throw new Failure(`iv: approving on ${a.name}: ${response.status} ${await bodyText(response)}`);
  let going;
  const started = new Promise((resolve) => (going = resolve));
  let aDone = false;
  const onA = readSse(response, (value, data) => {
    if (data.filter((line) => line.includes('"text-delta"')).length >= 3) going();
  })
    .catch(() => "cut")
    .finally(() => (aDone = true));
  await within(Promise.race([started, onA]), `three pieces of the slow answer on ${a.name}`);
  check(!aDone, `iv: the stream on ${a.name} ended before it could be cut`);
  const before = runsOf(chat, asked.call);
  check(before === 1, `iv: the approved call ran ${before} times on ${a.name} before the kill, not once`);
  const exited = new Promise((resolve) => a.child.once("exit", (code, signal) => resolve(signal ?? code)));
  a.child.kill("SIGKILL");
  check((await within(exited, `exit of the killed ${a.name}`)) === "SIGKILL", `iv: ${a.name} was not killed`);
  const killedAt = performance.now();
  await onA;
  // Seen from B, until the chat settles or the lease and a margin are
  // over: no run going (GET /stream 204, or a stream that ends) and no call
  // waiting for approval again (the approved one ran).
  let status;
  let lines = [];
  let messages = [];
  let waiting = [];
  const stream = `${b.url}/api/chat/${encodeURIComponent(chat)}/stream`;
  const settled = async () => {
    const again = await fetch(stream);
    status = again.status;
    lines = status === 200 ? await readSse(again) : [];
    if (status !== 200) await bodyText(again);
    messages = await messagesOf(b.url, chat);
    waiting = messages.flatMap((message) => message.parts ?? []).filter((part) => part.state === "approval-requested");
    return (status === 204 || status === 200) && waiting.length === 0;
  };
  await within(
    (async () => {
      while (!(await settled()) && performance.now() - killedAt < LEASE_MS + MARGIN_MS) await sleep(500);
    })(),
    `end of the killed replica's run, seen from ${b.name}`,
    LEASE_MS + MARGIN_MS + WAIT_MS,
  );
  const ended = Math.round(performance.now() - killedAt);
  const kept = textOf(messages).some((text) => text.includes(SLOW_WEATHER));
  // A new question, on C.
  const next = await post(c.url, { id: chat, trigger: "submit-message", messages: [...messages, { ...userMessage(QUESTION), id: "u2" }] });
  const nextStatus = next.status;
  const nextChunks = nextStatus === 200 ? parsed(await within(readSse(next), `end of the new question's stream on ${c.name}`)) : [];
  const nextText = nextStatus === 200 ? "" : await bodyText(next);
  await sleep(1000);
  const runs = runsOf(chat, asked.call);
  const summary =
    `${a.name} killed mid-answer; ${b.name}'s GET /stream, ${ended} ms after: ${status}` +
    `${status === 200 ? ` (${lines.length} data lines, last ${lines.at(-1)})` : ""}; question kept: ${kept}; ` +
    `calls still awaiting approval: ${waiting.length}; new question on ${c.name}: ${nextStatus}; ` +
    `tool runs of ${asked.call}: ${runs}`;
  check(kept, `iv: ${summary}: the chat lost its question: ${JSON.stringify(messages)}`);
  check(waiting.length === 0, `iv: ${summary}: the approved call shows as waiting again: ${JSON.stringify(waiting)}`);
  check(nextStatus === 200, `iv: ${summary}: ${nextText}`);
  check(
    nextChunks.at(-1)?.type === "finish",
    `iv: ${summary}: the new question's stream does not finish: ${JSON.stringify(nextChunks.at(-1))}`,
  );
  check(runs === 1, `iv: ${summary}: the approved call ran ${runs} times`);
  return summary;
}

// v: tests/browser/chat.mjs's page flows, through the balancer.
async function browserThroughBalancer(balancer) {
  const child = spawn(process.execPath, [path.join(ROOT, "tests/browser/chat.mjs")], {
    cwd: ROOT,
    env: { ...process.env, CHAT_URL: `${balancer.url}/` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  const output = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => output.push(line));
  }
  const code = await within(
    new Promise((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code))),
    "end of tests/browser/chat.mjs",
    4 * WAIT_MS,
  );
  check(code === 0, `v: tests/browser/chat.mjs through the balancer exited ${code}:\n      ${output.join("\n      ")}`);
  const passed = output.filter((line) => line.startsWith("ok: ")).map((line) => line.split(" ")[1]);
  return `tests/browser/chat.mjs through HAProxy: ${passed.join(", ")} passed`;
}

// ---------------------------------------------------------------------------

const binary = process.argv[2];
if (!binary || !fs.existsSync(binary)) {
  console.error("usage: node tests/replicas/run.mjs path/to/chat_ui (the example built with the features ui,postgres)");
  process.exit(2);
}
const results = [];
const attempt = async (name, run) => {
  const began = performance.now();
  try {
    const summary = await run();
    results.push({ name, ok: true });
    console.log(`ok   ${name}: ${summary} (${Math.round(performance.now() - began)} ms)`);
  } catch (error) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name}: ${error instanceof Failure ? error.message : error.stack}`);
  }
};

const databaseUrl = process.env.CHAT_DATABASE_URL ?? startPostgres();
const base = { ...process.env, CHAT_DATABASE_URL: databaseUrl };
delete base.OPENAI_API_KEY;
delete base.OPENAI_BASE_URL;
delete base.CHAT_URL;
const wanted = (id) => SCENARIOS.includes(id);

if (wanted("i") || wanted("ii") || wanted("v")) {
  const offline = [];
  for (const name of ["A", "B", "C"]) offline.push(await startReplica(binary, name, base));
  const balancer = await startBalancer(offline);
  console.log(
    `three replicas with the offline model (${offline.map((r) => `${r.name} ${r.url}`).join(", ")}) ` +
      `behind haproxy ${balancer.url}, on ${databaseUrl}`,
  );
  if (wanted("i")) await attempt("i   paused on A, approved on B", () => pausedOnAApprovedOnB(offline));
  if (wanted("ii")) await attempt("ii  two approvals at once", () => twoApprovalsAtOnce(offline));
  if (wanted("v")) await attempt("v   the browser through the balancer", () => browserThroughBalancer(balancer));
}
if (wanted("iii") || wanted("iv")) {
  const model = await startModel();
  const env = { ...base, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.url };
  const slow = [];
  for (const name of ["D", "E", "F"]) slow.push(await startReplica(binary, name, env));
  console.log(`three replicas with a slow model (${slow.map((r) => `${r.name} ${r.url}`).join(", ")})`);
  if (wanted("iii")) await attempt("iii a stream resumed on another replica", () => reloadOnAnotherReplica(slow));
  if (wanted("iv")) await attempt("iv  kill -9 of the streaming replica", () => killTheStreamingReplica(slow));
}

const twice = [...toolRuns].filter(([, by]) => by.length > 1);
console.log(
  `tool runs in all: ${[...toolRuns.values()].reduce((sum, by) => sum + by.length, 0)} over ${toolRuns.size} calls, ` +
    `${twice.length} calls ran more than once`,
);
const failed = results.filter((result) => !result.ok);
console.log(`${results.length - failed.length} of ${results.length} scenarios passed`);
process.exit(failed.length ? 1 : 0);
