// examples/chat_ui/main.rs in Debian's chromium, headless, clicked as a person
// would: ask for the weather, see the held get_weather call and its
// arguments, click Approve and see the tool's JSON output as a table, its
// chart (an image decoded), its hourly forecast (its artifact, a table), the
// answer and the typed answer's card; then, in a fresh chat, click Deny and
// see the model's reply to the denial and its card, and no chart or table. It also checks what the page
// sent to /api/chat: the question, then the approval response the server
// resumes the run from. The page reaches the example through a gate in this
// script that holds the answer to the question after its first piece of the
// call's arguments, until the page has shown that piece: so the arguments
// are seen as they stream, whatever the timing.
//
// Then what outlives the page and the server. Reload: the page reloads
// mid-answer and reattaches to the run's stream (useChat's `resume`, GET
// /api/chat/{id}/stream); the offline model answers at once, so that run's
// model is one in this script (the example's OpenAI client pointed at it)
// that holds its answer after the first piece of the arguments until the
// page has reloaded. Restart: the example is killed (SIGKILL) while a call
// waits for approval and started again on the same SQLite file (CHAT_DB);
// the reloaded page shows the held call from the stored chat, Approve
// finishes the run.
//
// Then the page in front of durable runs: a Restate server (the binary
// `npm ci --prefix tests/restate` installs, which the test command runs) on
// loopback, its own base dir and free ports, and the example in durable mode
// (RESTATE_INGRESS: its runs are Restate workflow runs, made by the worker it
// serves in the same process and registers with the server). Approve and
// Deny again, each in a fresh chat, with the same checks of the page but the
// arguments' pieces: a durable run's call reaches the page whole (the workers
// record whole steps); and each flow's question and answer to the held call
// were two workflow runs, ended (the server's own record, its SQL
// introspection).
//
//   node tests/browser/chat.mjs [URL]
//
// Without a URL it builds the example (the test command's features, so cargo
// reuses that build) and starts it on a free port, its chats in a new
// temporary file (the reload, restart and durable flows always start their
// own, so they need the build). With CHAT_URL set instead, the approve and
// deny flows alone, against that URL: an example someone else started
// (tests/replicas/run.mjs: three replicas behind a load balancer), which
// this script neither builds nor restarts. Screenshots go to
// target/browser/ (under CARGO_TARGET_DIR if set): one per flow, and one
// named *-failed.png when a flow fails. The browser is /usr/bin/chromium, or
// CHROMIUM; playwright-core downloads none.

import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { ROOT, check, startExample } from "../typescript/support.mjs";

const QUESTION = "What is the weather in Paris?";
const ANSWER = "Right now it is 18°C and sunny in Paris.";
// A guard against a hang, not a measure: a flow's every wait ends by then.
const WAIT_MS = 30_000;
const SHOTS = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "browser");
// The Restate server of the durable flows, as tests/restate's npm ci installs it.
const RESTATE_SERVER = path.join(
  ROOT,
  "tests/restate/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server",
);

// Each example started, each temporary folder and the Restate server is
// cleaned up at exit, by a listener of its own: more than node's default 10.
process.setMaxListeners(20);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => process.exit(1));
}

// Between the page and the example: passes every request and response
// through, except that the first UI message stream is held, once, after the
// tool-input-delta that first makes the arguments non-empty. `held` is the
// arguments so far, `release` lets the stream go on. `seen` lists every
// request (method, path, status); `target` may change (a restarted example).
async function startGate(target) {
  const seen = [];
  let hold;
  const held = new Promise((resolve) => (hold = resolve));
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let gated = false;
  const server = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const upstream = await fetch(new URL(req.url, gate.target), {
        method: req.method,
        headers: req.headers["content-type"] ? { "content-type": req.headers["content-type"] } : {},
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      seen.push({ method: req.method, path: new URL(req.url, gate.target).pathname, status: upstream.status });
      const headers = Object.fromEntries(
        [...upstream.headers].filter(([name]) => !["content-length", "transfer-encoding", "connection"].includes(name)),
      );
      res.writeHead(upstream.status, headers);
      const decoder = new TextDecoder();
      let pending = "";
      let args = "";
      for await (const bytes of upstream.body ?? []) {
        pending += decoder.decode(bytes, { stream: true });
        let end;
        while ((end = pending.indexOf("\n\n")) !== -1) {
          const event = pending.slice(0, end + 2);
          pending = pending.slice(end + 2);
          res.write(event);
          if (gated || !event.startsWith("data: {")) continue;
          const chunk = JSON.parse(event.slice("data: ".length));
          if (chunk.type !== "tool-input-delta") continue;
          args += chunk.inputTextDelta;
          if (args === "") continue;
          gated = true;
          hold(args);
          await released;
        }
      }
      res.end(pending);
    } catch (error) {
      res.destroy(error);
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const gate = {
    target,
    url: `http://127.0.0.1:${server.address().port}/`,
    held: within(held, "the first piece of the call's arguments"),
    release,
    seen,
    close: () => {
      release();
      server.closeAllConnections();
      server.close();
    },
  };
  return gate;
}

// The model of the reload flow, in place of the example's offline one
// (which answers at once, so no run would be going when the page reloads):
// an OpenAI Chat Completions server on loopback that streams what the
// offline one does (a question calls get_weather {"city":"Paris"}, its
// arguments in pieces; the weather is said), but holds the call after its
// first piece of arguments until `release`. `held` resolves then.
async function startModel() {
  let hold;
  const held = new Promise((resolve) => (hold = resolve));
  let release;
  const released = new Promise((resolve) => (release = resolve));
  const chunk = (delta, finish = null) =>
    JSON.stringify({
      id: "chatcmpl-reload",
      object: "chat.completion.chunk",
      created: 1694268190,
      model: "gpt-4o-mini",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  const usage = JSON.stringify({
    id: "chatcmpl-reload",
    object: "chat.completion.chunk",
    created: 1694268190,
    model: "gpt-4o-mini",
    choices: [],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
  let calls = 0;
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
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (data) => res.write(`data: ${data}\n\n`);
      send(chunk({ role: "assistant", content: "" }));
      // The tool's result: the last message, or the one before the user
      // message that carries its chart (a tool message takes only text).
      let last = request.messages.at(-1);
      if (last.role === "user" && Array.isArray(last.content)) last = request.messages.at(-2);
      if (last.role === "tool") {
        // The weather as JSON on the first line; the answer said, then given
        // as the typed answer (final_answer), as the offline model does.
        const now = JSON.parse(last.content.split("\n")[0]);
        const text = `Right now it is ${now.celsius}°C and ${now.sky} in ${now.city}.`;
        const forecast = JSON.stringify({ ...now, summary: text });
        send(chunk({ content: text }));
        send(chunk({ tool_calls: [{ index: 0, id: "call_answer", type: "function", function: { name: "final_answer", arguments: forecast } }] }));
        send(chunk({}, "tool_calls"));
      } else {
        calls += 1;
        const id = `call_reload_${calls}`;
        send(chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name: "get_weather", arguments: "" } }] }));
        send(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"P' } }] }));
        if (calls === 1) {
          hold();
          await released;
        }
        send(chunk({ tool_calls: [{ index: 0, function: { arguments: 'aris"}' } }] }));
        send(chunk({}, "tool_calls"));
      }
      send(usage);
      send("[DONE]");
      res.end();
    } catch (error) {
      res.destroy(error);
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    held: within(held, "the model's first piece of the call's arguments"),
    release,
    close: () => {
      release();
      server.closeAllConnections();
      server.close();
    },
  };
}

// A new file for an example's chats, its folder removed when this script ends.
function freshDb(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `chat-ui-${name}-`));
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, "chats.db");
}

function within(promise, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} in ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

// One flow in a page of its own, so each is a new chat; the page's requests
// to /api/chat are collected for the checks.
async function flow(browser, target, name, run) {
  const gate = await startGate(target);
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const failures = [];
  page.on("pageerror", (error) => failures.push(`the page threw: ${error.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") failures.push(`the page logged an error: ${msg.text()}`);
  });
  const requests = [];
  const responses = [];
  const isChat = (request) => request.method() === "POST" && new URL(request.url()).pathname === "/api/chat";
  page.on("request", (request) => {
    if (isChat(request)) requests.push(request.postDataJSON());
  });
  page.on("response", (response) => {
    if (isChat(response.request())) responses.push(response);
  });
  fs.mkdirSync(SHOTS, { recursive: true });
  try {
    await page.goto(gate.url);
    await run(page, { requests, responses, gate });
    check(failures.length === 0, failures.join("\n"));
    const shot = path.join(SHOTS, `${name}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`ok: ${name} (screenshot ${shot})`);
  } catch (error) {
    const shot = path.join(SHOTS, `${name}-failed.png`);
    await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
    throw new Error(`${name}: ${error.message}\n${failures.join("\n")}\nscreenshot: ${shot}`, { cause: error });
  } finally {
    await page.close();
    gate.close();
  }
}

// The chat's id in the page's address.
function chatId(page) {
  const id = new URL(page.url()).searchParams.get("chat");
  check(id, `the page's address names its chat: ${page.url()}`);
  return id;
}

// The streaming call shows these arguments so far.
async function seePartialArguments(page, partial) {
  await page
    .waitForFunction((text) => {
      const shown = document.querySelector('[data-testid=tool][data-state="input-streaming"] [data-testid=tool-input]');
      return shown?.textContent === text;
    }, partial)
    .catch((error) => {
      throw new Error(`the streaming call does not show its arguments so far, ${JSON.stringify(partial)}`, { cause: error });
    });
  check((await page.getByTestId("approve").count()) === 0, "no buttons while the arguments stream");
}

// The question asked, up to the call shown with a part of its arguments
// (the gate holding the rest); the arguments so far.
async function askAndSeePartialCall(page, { requests, gate }) {
  await page.getByTestId("chat-input").fill(QUESTION);
  await page.getByTestId("send").click();
  await page.locator('[data-testid=message][data-role=user]', { hasText: QUESTION }).waitFor();
  const partial = await gate.held;
  await seePartialArguments(page, partial);
  check(requests[0]?.id === chatId(page), "the page asks in the chat its address names");
  return partial;
}

// The call whole with its name and arguments and the two buttons; a new
// question is not taken meanwhile.
async function seeHeldCall(page) {
  const tool = page.getByTestId("tool");
  await tool.and(page.locator('[data-state="approval-requested"]')).waitFor();
  check((await tool.count()) === 1, `one tool call shown, not ${await tool.count()}`);
  const name = await tool.getByTestId("tool-name").innerText();
  check(name === "get_weather", `the tool's name is shown: ${JSON.stringify(name)}`);
  const args = JSON.parse(await tool.getByTestId("tool-input").innerText());
  check(args.city === "Paris", `the call's arguments are shown: ${JSON.stringify(args)}`);
  await tool.getByTestId("approve").waitFor();
  await tool.getByTestId("deny").waitFor();
  // The server takes no new question while a call waits, nor does the page.
  await page.getByTestId("chat-input").fill("And in Rome?");
  check(await page.getByTestId("send").isDisabled(), "Send is disabled while a call waits for approval");
  await page.getByTestId("chat-input").fill("");
  return tool;
}

// Up to the held call: the question sent, the call shown with its name and
// its arguments as they stream, then whole, with the two buttons.
async function askAndSeeHeldCall(page, { requests, responses, gate }) {
  const partial = await askAndSeePartialCall(page, { requests, gate });
  const tool = page.getByTestId("tool");
  gate.release();
  await seeHeldCall(page);
  checkQuestionSent(requests);
  await checkArgumentsStreamed(responses[0], partial);
  return tool;
}

// Up to a durable run's held call: the question sent, the call shown whole
// with its name, its arguments and the two buttons. The workers record whole
// steps, so the call comes whole: the gate has no piece to hold it at.
async function askAndSeeWholeCall(page, { requests, responses, gate }) {
  gate.release();
  await page.getByTestId("chat-input").fill(QUESTION);
  await page.getByTestId("send").click();
  await page.locator('[data-testid=message][data-role=user]', { hasText: QUESTION }).waitFor();
  const tool = await seeHeldCall(page);
  check(requests[0]?.id === chatId(page), "the page asks in the chat its address names");
  checkQuestionSent(requests);
  const chunks = await streamed(responses[0]);
  const call = chunks.find((chunk) => chunk.type === "tool-input-available" && chunk.toolName === "get_weather");
  check(call?.input?.city === "Paris", `the stream gives the call whole: ${JSON.stringify(chunks)}`);
  const asks = chunks.filter((chunk) => chunk.type === "tool-approval-request" && chunk.toolCallId === call.toolCallId);
  check(asks.length === 1, `the stream asks for the call's approval once: ${JSON.stringify(chunks)}`);
  const finish = chunks.at(-1);
  check(
    finish?.type === "finish" && finish.finishReason === "tool-calls",
    `the run ends paused on the call: ${JSON.stringify(finish)}`,
  );
  return tool;
}

// Before the answer to the held call, one request, ending with the question.
function checkQuestionSent(requests) {
  check(requests.length === 1, `one request before the answer to the held call, not ${requests.length}`);
  const last = requests[0].messages.at(-1);
  check(
    last.role === "user" && last.parts.some((part) => part.type === "text" && part.text === QUESTION),
    `the first request ends with the question: ${JSON.stringify(last)}`,
  );
}

// The UI message stream the page read: v1, ending with [DONE]; its chunks
// before that.
async function streamed(response) {
  check(response !== undefined, "the page got a response to its question");
  const header = response.headers()["x-vercel-ai-ui-message-stream"];
  check(header === "v1", `the response is a UI message stream, v1: ${JSON.stringify(header)}`);
  const events = (await response.text())
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
  check(events.at(-1) === "[DONE]", "the stream ends with [DONE]");
  return events.slice(0, -1).map((event) => JSON.parse(event));
}

// The UI message stream the page read: the arguments in pieces, the piece
// the page showed only a part of them.
async function checkArgumentsStreamed(response, partial) {
  const deltas = (await streamed(response))
    .filter((chunk) => chunk.type === "tool-input-delta")
    .map((chunk) => chunk.inputTextDelta);
  check(deltas.length > 1, `the arguments came in pieces: ${JSON.stringify(deltas)}`);
  const whole = deltas.join("");
  check(JSON.parse(whole).city === "Paris", `the pieces make the arguments: ${JSON.stringify(deltas)}`);
  check(
    partial.length < whole.length && whole.startsWith(partial),
    `the page was shown a part of the arguments: ${JSON.stringify(partial)} of ${JSON.stringify(whole)}`,
  );
}

// After a button: the page sent one more request, ending with the assistant
// message whose call now carries the answer, in the same chat.
async function checkResponseSent(page, { requests }, approved) {
  await page.getByTestId("status").and(page.locator('[data-status="ready"]')).waitFor();
  check(requests.length === 2, `two requests in all, not ${requests.length}`);
  check(requests[1].id === requests[0].id, "both requests are the same chat");
  const last = requests[1].messages.at(-1);
  const call = last.role === "assistant" && last.parts.find((part) => part.toolCallId !== undefined);
  check(
    call && call.state === "approval-responded" && call.approval?.approved === approved,
    `the second request ends with the call ${approved ? "approved" : "denied"}: ${JSON.stringify(last)}`,
  );
}

// The cells of each row of a table, as text.
async function cells(table) {
  return table.locator("tr").evaluateAll((rows) => rows.map((row) => [...row.cells].map((cell) => cell.textContent)));
}

// The typed answer's card, with these fields.
async function seeAnswerCard(page, { celsius, sky, summary }) {
  const card = page.getByTestId("answer");
  await card.waitFor();
  check((await card.count()) === 1, `one answer card, not ${await card.count()}`);
  const fields = {
    city: await card.getByTestId("answer-city").innerText(),
    celsius: await card.getByTestId("answer-celsius").innerText(),
    sky: await card.getByTestId("answer-sky").innerText(),
    summary: await card.getByTestId("answer-summary").innerText(),
  };
  const want = { city: "Paris", celsius, sky, summary };
  check(JSON.stringify(fields) === JSON.stringify(want), `the answer card: ${JSON.stringify(fields)}`);
}

// Approve the held call: the tool runs; its output (JSON, as a table), its
// chart (decoded), its hourly forecast (the artifact, as a table), the answer
// and the typed answer's card show.
async function approveAndSeeAnswer(page, tool) {
  await tool.getByTestId("approve").click();
  await tool.and(page.locator('[data-state="output-available"]')).waitFor();
  check((await tool.getByTestId("approve").count()) === 0, "the buttons are gone once answered");
  const output = await cells(tool.getByTestId("tool-output"));
  check(
    JSON.stringify(output) === JSON.stringify([["city", "Paris"], ["celsius", "18"], ["sky", "sunny"]]),
    `the tool's JSON output is shown as a table: ${JSON.stringify(output)}`,
  );
  const image = page.getByTestId("file-image");
  await image.waitFor();
  await page.waitForFunction(() => document.querySelector("[data-testid=file-image]")?.complete);
  const size = await image.evaluate((img) => [img.naturalWidth, img.naturalHeight]);
  check(size[0] > 0 && size[1] > 0, `the tool's chart is decoded: ${size}`);
  check((await image.getAttribute("src")).startsWith("data:image/png;base64,"), "the chart is a data URL");
  const hourly = await cells(page.getByTestId("hourly"));
  check(
    JSON.stringify(hourly) ===
      JSON.stringify([
        ["hour", "°C", "sky"],
        ["09:00", "14", "cloudy"],
        ["12:00", "17", "sunny"],
        ["15:00", "18", "sunny"],
        ["18:00", "16", "sunny"],
      ]),
    `the hourly forecast (the tool's artifact) is shown as a table: ${JSON.stringify(hourly)}`,
  );
  const answer = page.locator('[data-testid=message][data-role=assistant] [data-testid=text]', { hasText: "Paris" });
  await answer.waitFor();
  const text = await answer.innerText();
  check(text === ANSWER, `the answer gives the weather: ${JSON.stringify(text)}`);
  await seeAnswerCard(page, { celsius: "18°C", sky: "sunny", summary: ANSWER });
  check((await page.getByTestId("tool").count()) === 1, "the typed answer's call is not shown as a call");
}

// The flows, up to the held call with `ask`: askAndSeeHeldCall, or
// askAndSeeWholeCall for a durable run.
const approve = (ask) => async (page, chat) => {
  const tool = await ask(page, chat);
  await approveAndSeeAnswer(page, tool);
  await checkResponseSent(page, chat, true);
};

const deny = (ask) => async (page, chat) => {
  const tool = await ask(page, chat);
  await tool.getByTestId("deny").click();
  await tool.and(page.locator('[data-state="output-denied"]')).waitFor();
  await tool.getByTestId("tool-denied").waitFor();
  check((await tool.getByTestId("tool-output").count()) === 0, "a denied call shows no output");
  await page.locator('[data-testid=message][data-role=assistant] [data-testid=text]', { hasText: /declined/i }).waitFor();
  // The run still ends in a typed answer, with no weather in it.
  await seeAnswerCard(page, { celsius: "–", sky: "not checked", summary: "Not checked: you declined the weather lookup." });
  await checkResponseSent(page, chat, false);
  // The tool did not run: no chart, no hourly forecast.
  check((await page.getByTestId("file-image").count()) === 0, "a denied call shows no chart");
  check((await page.getByTestId("hourly").count()) === 0, "a denied call shows no hourly forecast");
};

// The question shown once, as the chat's first message.
async function seeQuestion(page) {
  const users = page.locator("[data-testid=message][data-role=user]");
  const shown = await users.allInnerTexts();
  check(
    shown.length === 1 && shown[0].includes(QUESTION),
    `the reloaded page shows the question once: ${JSON.stringify(shown)}`,
  );
}

// What the gate saw of the chat's own routes: `GET /api/chat/{id}` etc.
function seenFor(gate, page, suffix) {
  const route = `/api/chat/${encodeURIComponent(chatId(page))}${suffix}`;
  return gate.seen.filter((request) => request.method === "GET" && request.path === route);
}

// Reload mid-answer: the model holds the call after its first piece of
// arguments (the run is going on the server, the page shows that piece);
// the page reloads, shows the question and, streamed again from the run's
// start, the call so far; the model goes on, the call waits, Approve
// finishes the run.
async function reload(page, chat, model) {
  const partial = await askAndSeePartialCall(page, chat);
  await model.held;
  await page.reload();
  // The reattached stream gives the call as far as the run got.
  await seePartialArguments(page, partial);
  check(seenFor(chat.gate, page, "").length === 1, "the reloaded page asked for the chat's messages");
  const reattached = seenFor(chat.gate, page, "/stream");
  check(
    reattached.length === 1 && reattached[0].status === 200,
    `the reloaded page reattached to the run's stream: ${JSON.stringify(reattached)}`,
  );
  await seeQuestion(page);
  model.release();
  const tool = await seeHeldCall(page);
  await approveAndSeeAnswer(page, tool);
  await page.getByTestId("status").and(page.locator('[data-status="ready"]')).waitFor();
  check(chat.requests.length === 2, `the question and the approval sent, not ${chat.requests.length} requests`);
  const last = chat.requests[1].messages.at(-1);
  const call = last.role === "assistant" && last.parts.find((part) => part.toolCallId !== undefined);
  check(call?.approval?.approved === true, `the second request approves the call: ${JSON.stringify(last)}`);
}

// Restart: the call held, the example killed and started again on the same
// SQLite file; the reloaded page shows the held call from the stored chat,
// no run to reattach to; Approve finishes the run.
async function restart(page, chat, example) {
  await askAndSeeHeldCall(page, chat);
  const killed = once(example.child, "exit");
  example.child.kill("SIGKILL");
  const [, signal] = await within(killed, "exit of the killed example");
  check(signal === "SIGKILL", `the example was killed: ${signal}`);
  const again = await startExample("chat_ui", { env: { CHAT_DB: example.db }, waitMs: WAIT_MS });
  example.child = again.child;
  chat.gate.target = again.url;
  await page.reload();
  const tool = await seeHeldCall(page);
  const loaded = seenFor(chat.gate, page, "");
  check(loaded.length === 1 && loaded[0].status === 200, `the chat's messages were loaded: ${JSON.stringify(loaded)}`);
  const reattached = seenFor(chat.gate, page, "/stream");
  check(
    reattached.length === 1 && reattached[0].status === 204,
    `no run to reattach to after the restart: ${JSON.stringify(reattached)}`,
  );
  await seeQuestion(page);
  await approveAndSeeAnswer(page, tool);
  await checkResponseSent(page, chat, true);
}

// A free port of loopback (free when asked).
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Wait until `ready` resolves true (an error is a no), asking every 50 ms;
// `what` names it. `gone` says why waiting is pointless, if it is.
async function until(ready, what, gone = () => undefined) {
  await within(
    (async () => {
      while (!(await ready().catch(() => false))) {
        const why = gone();
        if (why) throw new Error(why);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })(),
    what,
  );
}

// A Restate server on loopback, as tools-restate's tests start it: its own
// base dir (with its log, server.log) and free ports. `admin` and `ingress`
// are its URLs; `runs()` counts the workflow runs that ended (its SQL
// introspection); `stop()` kills it and removes its dir (a few hundred MB),
// which happens too however this script ends.
async function startRestate() {
  check(
    fs.existsSync(RESTATE_SERVER),
    `no Restate server at ${RESTATE_SERVER}: install it with npm ci --prefix tests/restate --ignore-scripts (scripts/test.sh does)`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ui-restate-"));
  const [node, admin, ingress] = [await freePort(), await freePort(), await freePort()];
  const log = fs.openSync(path.join(dir, "server.log"), "w");
  const child = spawn(RESTATE_SERVER, ["--bind-ip", "127.0.0.1", "--listen-mode", "tcp", "--no-logo", "--base-dir", dir], {
    env: {
      ...process.env,
      RESTATE_BIND_PORT: `${node}`,
      RESTATE_ADMIN__BIND_PORT: `${admin}`,
      RESTATE_INGRESS__BIND_PORT: `${ingress}`,
    },
    stdio: ["ignore", log, log],
  });
  fs.closeSync(log);
  const remove = () => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  const onExit = () => {
    child.kill("SIGKILL");
    try {
      remove();
    } catch {}
  };
  process.on("exit", onExit);
  const exited = once(child, "exit");
  const server = {
    admin: `http://127.0.0.1:${admin}`,
    ingress: `http://127.0.0.1:${ingress}`,
    log: () => fs.readFileSync(path.join(dir, "server.log"), "utf8").split("\n").slice(-30).join("\n"),
    runs: async () => {
      const response = await fetch(`${server.admin}/query`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({
          query:
            "SELECT count(*) AS runs FROM sys_invocation WHERE target_service_name = 'AgentRun' " +
            "AND target_handler_name = 'run' AND status = 'completed'",
        }),
      });
      const body = await response.text();
      check(response.ok, `the Restate admin API's query failed: ${response.status} ${body}`);
      return Number(JSON.parse(body).rows[0].runs);
    },
    stop: async () => {
      process.off("exit", onExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      remove();
    },
  };
  const gone = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `the Restate server exited (${child.signalCode ?? child.exitCode})`
      : undefined;
  try {
    await until(async () => (await fetch(`${server.admin}/health`)).ok, "healthy Restate admin API", gone);
    await until(async () => (await fetch(`${server.ingress}/restate/health`)).ok, "Restate ingress", gone);
    // Its partitions up: until then, its queries answer 500 (`node lookup
    // for partition 1 failed`).
    await until(async () => (await server.runs()) === 0, "Restate partitions up", gone);
  } catch (error) {
    const logged = server.log();
    await server.stop();
    throw new Error(`${error.message}\nthe Restate server's log, last lines:\n${logged}`, { cause: error });
  }
  return server;
}

// A durable flow: the same clicks, and the runs it made ended on Restate,
// two (the question, and the answer to the held call).
async function durableFlow(browser, example, restate, name, run) {
  const before = await restate.runs();
  await flow(browser, example.url, name, run);
  const made = (await restate.runs()) - before;
  check(made === 2, `${name}: two workflow runs ended on Restate (the question, the answer), not ${made}`);
}

// Only the page flows, against an example started elsewhere.
const only = process.env.CHAT_URL;
let url = only ?? process.argv[2];
if (url === undefined) {
  ({ url } = await startExample("chat_ui", { env: { CHAT_DB: freshDb("flows") }, waitMs: WAIT_MS }));
}
// A fresh profile (playwright-core makes a temporary one), and nothing the
// browser would fetch on its own: the test reaches only the example.
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
let failed = false;
const attempt = async (name, start) => {
  const began = performance.now();
  try {
    await start();
    console.log(`   ${name} took ${Math.round(performance.now() - began)} ms`);
  } catch (error) {
    failed = true;
    console.error(`FAILED ${error.message}`);
  }
};
try {
  for (const [name, run] of [
    ["approve", approve(askAndSeeHeldCall)],
    ["deny", deny(askAndSeeHeldCall)],
  ]) {
    await attempt(name, () => flow(browser, url, name, run));
  }
  if (only !== undefined) {
    await browser.close();
    process.exit(failed ? 1 : 0);
  }
  await attempt("reload", async () => {
    const model = await startModel();
    try {
      const env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.url, CHAT_DB: freshDb("reload") };
      const example = await startExample("chat_ui", { env, waitMs: WAIT_MS });
      try {
        await flow(browser, example.url, "reload", (page, chat) => reload(page, chat, model));
      } finally {
        example.child.kill();
      }
    } finally {
      model.close();
    }
  });
  await attempt("restart", async () => {
    const db = freshDb("restart");
    const example = { db, ...(await startExample("chat_ui", { env: { CHAT_DB: db }, waitMs: WAIT_MS })) };
    try {
      await flow(browser, example.url, "restart", (page, chat) => restart(page, chat, example));
    } finally {
      example.child.kill();
    }
  });
  // In front of durable runs: one Restate server and one example in durable
  // mode (its worker in the same process, registered by it) for both flows.
  let restate;
  let durable;
  await attempt("durable setup", async () => {
    restate = await startRestate();
    const env = { RESTATE_INGRESS: restate.ingress, RESTATE_ADMIN: restate.admin, CHAT_DB: freshDb("durable") };
    durable = await startExample("chat_ui", { env, waitMs: WAIT_MS });
  });
  if (durable) {
    for (const [name, run] of [
      ["durable-approve", approve(askAndSeeWholeCall)],
      ["durable-deny", deny(askAndSeeWholeCall)],
    ]) {
      await attempt(name, () => durableFlow(browser, durable, restate, name, run));
    }
  }
  durable?.child.kill();
  await restate?.stop();
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
