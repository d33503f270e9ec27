#!/usr/bin/env node
// The TypeScript SDK's client calling `add` COUNT times, one after the other,
// on one kept-alive connection (Node's fetch keeps it), for
// benches/mcp_keepalive.rs. Prints the calls per second.
//
//     node benches/keepalive/client.mjs URL COUNT

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(path.join(ROOT, "tests/typescript/package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, count] = [process.argv[2], Number(process.argv[3] ?? 200)];
const client = new Client({ name: "keepalive-bench", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
// One call first, so connecting is not timed.
await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
const started = process.hrtime.bigint();
for (let i = 0; i < count; i++) {
  const result = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  if (result.content[0].text !== "42") throw new Error(`add said ${JSON.stringify(result)}`);
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log((count / seconds).toFixed(1));
await client.close();
