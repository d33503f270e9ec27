#!/usr/bin/env node
// The official TypeScript SDK's client (@modelcontextprotocol/sdk) through
// a round-robin balancer in front of stateless replicas of one toolset:
//
//     npm ci --prefix tests/typescript
//     node tests/typescript/balanced.mjs http://127.0.0.1:PORT/mcp
//
// Started by tools-mcp/tests/it/balanced.rs, which runs the replicas
// (each answers `double` with "<2n> <replica>") and HAProxy. Checked:
// connecting, listing, 20 calls each answered right, by more than one
// replica, and progress on a call's own answer. Prints the calls each
// replica answered as JSON; exits non-zero on the first check that fails.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { check } from "./support.mjs";

const url = process.argv[2];
check(url, "usage: node tests/typescript/balanced.mjs <balancer URL>");

const client = new Client({ name: "balanced-typescript", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
check(client.getServerVersion()?.name, "no server info after initialize");

const { tools } = await client.listTools();
const names = tools.map((tool) => tool.name).sort();
check(names.includes("double") && names.includes("steps"), `listed: ${names}`);

const answered = {};
for (let n = 0; n < 20; n++) {
  const result = await client.callTool({ name: "double", arguments: { n } });
  const text = result.content.map((block) => block.text).join("\n");
  check(!result.isError, `call ${n}: ${text}`);
  const [doubled, replica] = text.split(" ");
  check(doubled === String(n * 2), `call ${n}: ${text}`);
  answered[replica] = (answered[replica] ?? 0) + 1;
}
check(Object.keys(answered).length > 1, `one replica answered every call: ${JSON.stringify(answered)}`);

const progress = [];
const steps = await client.callTool({ name: "steps", arguments: { n: 3 } }, undefined, {
  onprogress: (report) => progress.push(report.progress),
});
check(!steps.isError, `steps: ${JSON.stringify(steps)}`);
check(JSON.stringify(progress) === "[1,2,3]", `progress: ${JSON.stringify(progress)}`);

await client.close();
console.log(JSON.stringify(answered));
