// examples/chat_ui/main.rs in Debian's chromium, headless, clicked as a person
// would: ask for the weather, see the held get_weather call and its
// arguments, click Approve and see the answer; then, in a fresh chat, click
// Deny and see the model's reply to the denial. It also checks what the page
// sent to /api/chat: the question, then the approval response the server
// resumes the run from. The page reaches the example through a gate in this
// script that holds the answer to the question after its first piece of the
// call's arguments, until the page has shown that piece: so the arguments
// are seen as they stream, whatever the timing.
//
//   node tests/browser/chat.mjs [URL]
//
// Without a URL it builds the example (the test command's features, so cargo
// reuses that build) and starts it on a free port. Screenshots go to
// target/browser/ (under CARGO_TARGET_DIR if set): one per flow, and one
// named *-failed.png when a flow fails. The browser is /usr/bin/chromium, or
// CHROMIUM; playwright-core downloads none.

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium } from "playwright-core";
import { ROOT, check, startExample } from "../typescript/support.mjs";

const QUESTION = "What is the weather in Paris?";
// A guard against a hang, not a measure: a flow's every wait ends by then.
const WAIT_MS = 30_000;
const SHOTS = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "browser");

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => process.exit(1));
}

// Between the page and the example: passes every request and response
// through, except that the first UI message stream is held, once, after the
// tool-input-delta that first makes the arguments non-empty. `held` is the
// arguments so far, `release` lets the stream go on.
async function startGate(target) {
  let hold;
  const held = new Promise((resolve) => (hold = resolve));
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let gated = false;
  const server = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const upstream = await fetch(new URL(req.url, target), {
        method: req.method,
        headers: req.headers["content-type"] ? { "content-type": req.headers["content-type"] } : {},
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const headers = Object.fromEntries(
        [...upstream.headers].filter(([name]) => !["content-length", "transfer-encoding", "connection"].includes(name)),
      );
      res.writeHead(upstream.status, headers);
      const decoder = new TextDecoder();
      let pending = "";
      let args = "";
      for await (const bytes of upstream.body) {
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
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    held: within(held, "the first piece of the call's arguments"),
    release,
    close: () => {
      release();
      server.closeAllConnections();
      server.close();
    },
  };
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

// Up to the held call: the question sent, the call shown with its name and
// its arguments as they stream, then whole, with the two buttons.
async function askAndSeeHeldCall(page, { requests, responses, gate }) {
  await page.getByTestId("chat-input").fill(QUESTION);
  await page.getByTestId("send").click();
  await page.locator('[data-testid=message][data-role=user]', { hasText: QUESTION }).waitFor();
  const tool = page.getByTestId("tool");
  const partial = await gate.held;
  await page
    .waitForFunction((text) => {
      const shown = document.querySelector('[data-testid=tool][data-state="input-streaming"] [data-testid=tool-input]');
      return shown?.textContent === text;
    }, partial)
    .catch((error) => {
      throw new Error(`the streaming call does not show its arguments so far, ${JSON.stringify(partial)}`, { cause: error });
    });
  check((await tool.getByTestId("approve").count()) === 0, "no buttons while the arguments stream");
  gate.release();
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

  check(requests.length === 1, `one request before the answer to the held call, not ${requests.length}`);
  const last = requests[0].messages.at(-1);
  check(
    last.role === "user" && last.parts.some((part) => part.type === "text" && part.text === QUESTION),
    `the first request ends with the question: ${JSON.stringify(last)}`,
  );
  await checkArgumentsStreamed(responses[0], partial);
  return tool;
}

// The UI message stream the page read: v1, the arguments in pieces, the
// piece the page showed only a part of them.
async function checkArgumentsStreamed(response, partial) {
  check(response !== undefined, "the page got a response to its question");
  const header = response.headers()["x-vercel-ai-ui-message-stream"];
  check(header === "v1", `the response is a UI message stream, v1: ${JSON.stringify(header)}`);
  const events = (await response.text())
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
  check(events.at(-1) === "[DONE]", "the stream ends with [DONE]");
  const deltas = events
    .slice(0, -1)
    .map((event) => JSON.parse(event))
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

async function approve(page, chat) {
  const tool = await askAndSeeHeldCall(page, chat);
  await tool.getByTestId("approve").click();
  await tool.and(page.locator('[data-state="output-available"]')).waitFor();
  check((await tool.getByTestId("approve").count()) === 0, "the buttons are gone once answered");
  const output = await tool.getByTestId("tool-output").innerText();
  check(output.trim() !== "", "the tool's output is shown");
  const answer = page.locator('[data-testid=message][data-role=assistant] [data-testid=text]', { hasText: "Paris" });
  await answer.waitFor();
  const text = await answer.innerText();
  check(/\d\s*°[CF]/.test(text), `the answer gives the temperature: ${JSON.stringify(text)}`);
  await checkResponseSent(page, chat, true);
}

async function deny(page, chat) {
  const tool = await askAndSeeHeldCall(page, chat);
  await tool.getByTestId("deny").click();
  await tool.and(page.locator('[data-state="output-denied"]')).waitFor();
  await tool.getByTestId("tool-denied").waitFor();
  check((await tool.getByTestId("tool-output").count()) === 0, "a denied call shows no output");
  await page.locator('[data-testid=message][data-role=assistant] [data-testid=text]', { hasText: /declined/i }).waitFor();
  await checkResponseSent(page, chat, false);
}

const url = process.argv[2] ?? (await startExample("chat_ui", WAIT_MS));
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
try {
  for (const [name, run] of [
    ["approve", approve],
    ["deny", deny],
  ]) {
    try {
      await flow(browser, url, name, run);
    } catch (error) {
      failed = true;
      console.error(`FAILED ${error.message}`);
    }
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
