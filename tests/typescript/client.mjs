#!/usr/bin/env node
// The example MCP server against the official TypeScript SDK
// (@modelcontextprotocol/sdk), over stdio and over streamable HTTP:
//
//     npm ci --prefix tests/typescript
//     node tests/typescript/client.mjs [path/to/mcp_server]
//
// Checked: listing, a valid call, an image (the chart, a PNG), numbers
// sent as strings, each bad-argument case, an unknown tool, progress,
// cancellation, no validator warnings, over HTTP the token and a call's
// stream cut and resumed (Last-Event-ID), and approval: `cancel_alert` is refused
// to a client without elicitation, and runs for one whose person ticks the
// box the server asks about; a string with a lone surrogate is refused
// with the request's id; over HTTP, a batch in a session at 2025-03-26.
//
// Without a path it builds the example with cargo first. Exits non-zero on
// the first check that fails. Over HTTP it also times sequential calls on
// one kept-alive connection, and prints the rate (not checked: the machine
// is shared).

import { spawn } from "node:child_process";
import { createServer, connect } from "node:net";
import { createInterface } from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { buildServer, check } from "./support.mjs";

const TOKEN = "typescript-test-token";

// The SDK's validator warns on formats it does not know (`uint8`...): the
// server must send none, so every warning is collected and checked.
const warnings = [];
const warn = console.warn;
console.warn = (...args) => {
  warnings.push(args.join(" "));
  warn(...args);
};

const textOf = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");

async function exercise(client, transport) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check(
    JSON.stringify(names) === '["get_weather","count_slowly","cancel_alert","weather_chart"]',
    `${transport}: tool names ${names}`,
  );
  const schema = tools[0].inputSchema;
  check(schema.type === "object" && JSON.stringify(schema.required) === '["city"]', `${transport}: schema`);
  check(schema.properties.days.maximum === 16, `${transport}: days range ${JSON.stringify(schema)}`);
  check(JSON.stringify(schema).indexOf("uint") === -1, `${transport}: a non-standard format was sent`);

  const ok = await client.callTool({ name: "get_weather", arguments: { city: "Paris", days: 3 } });
  check(!ok.isError, `${transport}: valid call failed: ${textOf(ok)}`);
  check(ok.structuredContent.days === 3 && ok.structuredContent.celsius.length === 3, `${transport}: structured`);

  const chart = await client.callTool({ name: "weather_chart", arguments: { city: "Paris", days: 5 } });
  check(!chart.isError, `${transport}: chart failed: ${textOf(chart)}`);
  const images = chart.content.filter((b) => b.type === "image");
  check(images.length === 1 && images[0].mimeType === "image/png", `${transport}: chart ${JSON.stringify(chart.content)}`);
  const png = Buffer.from(images[0].data, "base64");
  check(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), `${transport}: not a PNG`);

  const fenced = await client.callTool({ name: "get_weather", arguments: { city: "Paris", days: 17 } });
  check(fenced.isError === true, `${transport}: days=17 accepted`);
  check(textOf(fenced).includes("`days` must be at most 16"), `${transport}: range message ${textOf(fenced)}`);

  const wrong = await client.callTool({ name: "get_weather", arguments: { city: "Paris", days: "three" } });
  check(wrong.isError === true, `${transport}: days='three' accepted`);
  check(textOf(wrong).includes("at `days`: invalid type"), `${transport}: type message ${textOf(wrong)}`);

  // Numbers sent as strings, as clients that build arguments from text do
  // (the MCP Inspector's CLI up to 0.16.5): read as pydantic's lax mode reads
  // them, never the other way (the string field keeps "2").
  const lax = await client.callTool({ name: "get_weather", arguments: { city: "2", days: " 2 " } });
  check(!lax.isError, `${transport}: days=" 2 " refused: ${textOf(lax)}`);
  check(
    lax.structuredContent.city === "2" && lax.structuredContent.days === 2,
    `${transport}: lax ${JSON.stringify(lax.structuredContent)}`,
  );
  const laxCount = await client.callTool({ name: "count_slowly", arguments: { to: "3", step_ms: "0" } });
  check(!laxCount.isError, `${transport}: to="3" refused: ${textOf(laxCount)}`);
  const half = await client.callTool({ name: "get_weather", arguments: { city: "Paris", days: "2.5" } });
  check(half.isError === true, `${transport}: days="2.5" accepted`);
  check(
    textOf(half).includes('at `days`: expected an integer, not the string "2.5", which is not a whole number'),
    `${transport}: fraction message ${textOf(half)}`,
  );
  const above = await client.callTool({ name: "get_weather", arguments: { city: "Paris", days: "17" } });
  check(textOf(above).includes("`days` must be at most 16"), `${transport}: days="17" ${textOf(above)}`);

  const missing = await client.callTool({ name: "get_weather", arguments: {} });
  check(missing.isError === true && textOf(missing).includes("city"), `${transport}: missing city`);

  // The SDK (1.32) hands a response to its caller before it runs the
  // handlers of notifications read in the same chunk, and then drops those
  // as "unknown token": the report sent just before the result is lost on
  // the client side. Steps apart, the earlier ones arrive in order.
  const progress = [];
  const counted = await client.callTool({ name: "count_slowly", arguments: { to: 3, step_ms: 50 } }, undefined, {
    onprogress: (p) => progress.push([p.progress, p.total]),
  });
  check(textOf(counted) === "counted to 3", `${transport}: count result ${textOf(counted)}`);
  const expected = JSON.stringify([[1, 3], [2, 3], [3, 3]].slice(0, Math.max(progress.length, 2)));
  check(JSON.stringify(progress) === expected, `${transport}: progress ${JSON.stringify(progress)}`);

  await cancellation(client, transport);

  const refused = await client.callTool({ name: "cancel_alert", arguments: { city: "Oslo" } });
  check(refused.isError && textOf(refused).includes("does not support MCP elicitation"), `${transport}: ${textOf(refused)}`);

  let code;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (error) {
    code = error.code;
  }
  check(code === -32602, `${transport}: unknown tool code ${code}`);

  await loneSurrogate(client, transport);
  check(warnings.length === 0, `${transport}: the SDK warned: ${warnings.join("; ")}`);
  console.log(`typescript client over ${transport}: ok`);
}

// A string with a lone surrogate, which JavaScript holds and JSON.stringify
// writes as `\ud800`: not Unicode, so the server cannot read the request,
// but it answers with the request's id (over stdio, -32700; over HTTP, a
// 400 with that answer), and the call fails at once instead of waiting
// for the SDK's timeout.
async function loneSurrogate(client, transport) {
  let error;
  const started = performance.now();
  try {
    await client.callTool({ name: "get_weather", arguments: { city: "Par\ud800is" } }, undefined, { timeout: 20_000 });
  } catch (caught) {
    error = caught;
  }
  check(error !== undefined, `${transport}: a lone surrogate was accepted`);
  const says = String(error.message);
  if (transport === "stdio") {
    check(error.code === -32700, `${transport}: lone surrogate: code ${error.code}, ${says}`);
  } else {
    check(error.code === 400 && says.includes('"code":-32700') && !says.includes('"id":null'), `${transport}: lone surrogate: ${says}`);
  }
  check(says.includes("escape"), `${transport}: lone surrogate: ${says}`);
  console.log(`${transport}: a lone surrogate failed in ${Math.round(performance.now() - started)} ms`);
}

// Abort a call once it has counted to 2: the SDK sends
// notifications/cancelled and rejects the call. Over stdio the reports of
// a call that went on would still arrive, as progress for a token the SDK
// has forgotten (it reports those through onerror): the tool must stop, so
// at most the one report already on its way comes. Over HTTP they would go
// to the aborted request's stream; there the session must simply go on.
async function cancellation(client, transport) {
  const late = [];
  const onerror = client.onerror;
  client.onerror = (error) => (String(error).includes("unknown token") ? late.push(error) : onerror?.(error));
  const controller = new AbortController();
  let aborted;
  try {
    await client.callTool({ name: "count_slowly", arguments: { to: 40, step_ms: 50 } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => p.progress >= 2 && controller.abort("enough"),
    });
  } catch (error) {
    aborted = error;
  }
  check(aborted !== undefined, `${transport}: the aborted call resolved`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  client.onerror = onerror;
  check(late.length <= 1, `${transport}: ${late.length} progress reports after the abort: the tool ran on`);
  const after = await client.callTool({ name: "get_weather", arguments: { city: "Oslo" } });
  check(!after.isError && after.structuredContent.city === "Oslo", `${transport}: call after the abort`);
}

async function overStdio(binary) {
  const client = new Client({ name: "ts-test", version: "1.0.0" });
  const env = { ...process.env };
  delete env.TAVILY_API_KEY;
  await client.connect(new StdioClientTransport({ command: binary, args: [], env }));
  try {
    await exercise(client, "stdio");
  } finally {
    await client.close();
  }
}

// A client whose person approves: the server asks through elicitation/create.
async function approvalOverStdio(binary) {
  const client = new Client({ name: "ts-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return { action: "accept", content: { approve: true } };
  });
  const env = { ...process.env };
  delete env.TAVILY_API_KEY;
  await client.connect(new StdioClientTransport({ command: binary, args: [], env }));
  try {
    const result = await client.callTool({ name: "cancel_alert", arguments: { city: "Oslo" } });
    check(!result.isError && textOf(result) === "cancelled the alert for Oslo", `approval: ${textOf(result)}`);
    check(asked.length === 1 && asked[0].message.includes("cancel_alert"), `approval: asked ${JSON.stringify(asked)}`);
    check(asked[0].requestedSchema.properties.approve.type === "boolean", "approval: the form has no box");
    console.log("typescript client over stdio: approval ok");
  } finally {
    await client.close();
  }
}

// A JSON-RPC batch, sent by the SDK's own transport (its send takes an
// array) in a session at 2025-03-26, the version whose clients may send
// one: each call answered, through the stream the server answers with.
// (Without Client, which asks for its latest version.)
async function batchOverHttp(url) {
  const headers = { Authorization: `bearer ${TOKEN}` };
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const received = [];
  let wake = () => {};
  transport.onmessage = (message) => {
    received.push(message);
    wake();
  };
  const answered = async (id) => {
    while (!received.some((message) => message.id === id)) await new Promise((resolve) => (wake = resolve));
    return received.find((message) => message.id === id);
  };
  await transport.start();
  try {
    const clientInfo = { name: "ts-batch", version: "1.0.0" };
    await transport.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo } });
    const initialized = await answered(0);
    check(initialized.result?.protocolVersion === "2025-03-26", `batch: initialized at ${JSON.stringify(initialized)}`);
    // A 2025-03-26 client sends no MCP-Protocol-Version header: the
    // transport's is left unset.
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = (id, city) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_weather", arguments: { city } } });
    await transport.send([call(1, "Oslo"), call(2, "Lima"), { jsonrpc: "2.0", method: "notifications/roots/list_changed" }]);
    const [oslo, lima] = [await answered(1), await answered(2)];
    check(oslo.result?.structuredContent?.city === "Oslo", `batch: ${JSON.stringify(oslo)}`);
    check(lima.result?.structuredContent?.city === "Lima", `batch: ${JSON.stringify(lima)}`);
    console.log("typescript transport over streamable HTTP: a batch at 2025-03-26 answered");
  } finally {
    await transport.terminateSession().catch(() => {});
    await transport.close();
  }
}

// A TCP relay to the server that cuts the first connection on which a
// progress report comes back, right after relaying it: a call's event
// stream lost mid-call, as a flaky network loses it.
async function cutter(upstream) {
  const target = new URL(upstream);
  const relay = { cuts: 0, armed: true };
  relay.server = createServer((client) => {
    const server = connect(Number(target.port), target.hostname);
    const close = () => {
      client.destroy();
      server.destroy();
    };
    client.on("data", (data) => server.write(data));
    server.on("data", (data) => {
      client.write(data);
      if (relay.armed && data.includes('"notifications/progress"')) {
        relay.armed = false;
        relay.cuts += 1;
        close();
      }
    });
    for (const end of [client, server]) {
      end.on("error", close);
      end.on("close", close);
    }
  });
  await new Promise((resolve) => relay.server.listen(0, "127.0.0.1", resolve));
  relay.url = new URL(target.pathname, `http://127.0.0.1:${relay.server.address().port}`);
  return relay;
}

// A call whose event stream is cut after its first progress report: the SDK
// reconnects with Last-Event-ID after the server's retry delay (3 s) and
// gets the rest, each report once. Counting to 6 by 1 s steps the call
// still runs then; to 3 by 0.3 s steps it has answered, and its events are
// replayed.
async function resumption(url, headers) {
  for (const [to, step_ms, when] of [
    [6, 1000, "while the call runs"],
    [3, 300, "after the call answered"],
  ]) {
    const relay = await cutter(url);
    const client = new Client({ name: "ts-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(relay.url, { requestInit: { headers } });
    await client.connect(transport);
    try {
      const progress = [];
      const counted = await client.callTool({ name: "count_slowly", arguments: { to, step_ms } }, undefined, {
        onprogress: (p) => progress.push([p.progress, p.total]),
        timeout: 20_000,
      });
      check(relay.cuts === 1, `resumption ${when}: the stream was not cut`);
      check(counted.content[0].text === `counted to ${to}`, `resumption ${when}: ${JSON.stringify(counted)}`);
      const expected = Array.from({ length: to }, (_, i) => [i + 1, to]);
      check(JSON.stringify(progress) === JSON.stringify(expected), `resumption ${when}: progress ${JSON.stringify(progress)}`);
    } finally {
      await client.close();
      relay.server.close();
    }
    console.log(`typescript client over streamable HTTP: a cut stream resumed ${when}, each event once`);
  }
}

async function overHttp(binary) {
  const env = { ...process.env };
  delete env.TAVILY_API_KEY;
  const server = spawn(binary, ["--http", "127.0.0.1:0", "--token", TOKEN], { env, stdio: ["ignore", "ignore", "pipe"] });
  try {
    const url = await new Promise((resolve, reject) => {
      const lines = createInterface({ input: server.stderr });
      lines.on("line", (line) => {
        if (line.startsWith("listening on ")) resolve(line.slice("listening on ".length).trim());
      });
      server.on("exit", (code) => reject(new Error(`the server exited with ${code}`)));
    });
    const refused = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    check(refused.status === 401, `no token: status ${refused.status}`);

    const client = new Client({ name: "ts-test", version: "1.0.0" });
    const headers = { Authorization: `bearer ${TOKEN}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    try {
      await exercise(client, "streamable HTTP");
      await resumption(url, headers);
      const calls = 200;
      const started = performance.now();
      for (let i = 0; i < calls; i++) {
        await client.callTool({ name: "get_weather", arguments: { city: "Paris" } });
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(`typescript client, ${calls} sequential HTTP calls: ${Math.round(calls / seconds)} calls/s`);
    } finally {
      await client.close();
    }
    await batchOverHttp(url);
  } finally {
    server.kill();
  }
}

const binary = process.argv[2] ?? process.env.MCP_SERVER ?? buildServer();
const within = (ms, promise, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: timed out`)), ms))]);
try {
  await within(60_000, overStdio(binary), "stdio");
  await within(60_000, approvalOverStdio(binary), "approval over stdio");
  await within(60_000, overHttp(binary), "streamable HTTP");
  process.exit(0);
} catch (error) {
  console.error(`typescript client: ${error.stack ?? error}`);
  process.exit(1);
}
