#!/usr/bin/env node
// The example MCP server through the MCP Inspector's CLI over stdio, the
// way a person tries a tool from the shell:
//
//     npm ci --prefix tests/typescript
//     node tests/typescript/inspector.mjs [path/to/mcp_server]
//
//     npx @modelcontextprotocol/inspector --cli path/to/mcp_server \
//         --method tools/call --tool-name get_weather --tool-arg city=Paris --tool-arg days=2
//
// Two CLIs, both pinned in package.json: the Inspector today
// (@modelcontextprotocol/inspector 2.12.0) and the CLI of Inspector 0.16.5
// (@modelcontextprotocol/inspector-cli 0.16.5, the last to send
// `--tool-arg` values as the text they are where the type is a list:
// `days: Option<u8>` is `"type": ["integer", "null"]`, so `days=2` arrives
// as `"days":"2"`, which the server refused with "expected u8" and now reads
// as pydantic's lax mode does). Inspector 0.16.6 and later read the value
// as JSON, and 2.x then as the tool's schema says, so `days=2` arrives as
// the number 2 and `city='"2"'` as the string "2".
//
// The Inspector runs the server through this script in tap mode
// (`inspector.mjs tap LOG SERVER`), which passes stdio through and keeps
// every message the Inspector sent, so the checks are on what reached the
// server, not only on what came back.
//
// Without a path it builds the example with cargo first. Exits non-zero on
// the first check that fails.

import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { buildServer, check } from "./support.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/// Run `server` with this process's stdio, appending what the client
/// writes to it to `log`.
function tap(log, server) {
  const child = spawn(server, [], { stdio: ["pipe", "inherit", "inherit"] });
  process.stdin.on("data", (chunk) => {
    appendFileSync(log, chunk);
    child.stdin.write(chunk);
  });
  process.stdin.on("end", () => child.stdin.end());
  child.on("exit", (code) => process.exit(code ?? 1));
}

/// The Inspector today, and the CLI of Inspector 0.16.5.
const INSPECTOR = ["mcp-inspector", "--cli"];
const INSPECTOR_0_16 = ["mcp-inspector-cli", "--cli"];

/// One `tools/call` through an Inspector CLI: the result it printed, and
/// the arguments of the `tools/call` request that reached the server.
function inspect([bin, ...flags], server, dir, tool, args) {
  const log = path.join(dir, `${bin}-${tool}-${args.join("_").replace(/[^a-z0-9_=]/gi, "")}.jsonl`);
  const cli = path.join(HERE, "node_modules", ".bin", bin);
  const argv = [...flags, process.execPath, fileURLToPath(import.meta.url), "tap", log, server];
  argv.push("--method", "tools/call", "--tool-name", tool);
  for (const arg of args) argv.push("--tool-arg", arg);
  const run = spawnSync(cli, argv, { encoding: "utf8", timeout: 60_000 });
  // 2.x exits 0 for a result and 5 for one with isError, 0.16 exits 0:
  // both print it.
  check(run.status === 0 || run.status === 5, `${bin} ${args}: exit ${run.status}: ${run.stderr}`);
  const result = JSON.parse(run.stdout);
  const sent = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .find((message) => message.method === "tools/call");
  check(sent, `${bin} ${args}: no tools/call reached the server`);
  return { result, sent: sent.params.arguments };
}

const textOf = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");

function main() {
  const server = process.argv[2] ?? buildServer();
  const dir = mkdtempSync(path.join(tmpdir(), "inspector-"));
  try {
    // The command: a number for `days: Option<u8>`.
    let { result, sent } = inspect(INSPECTOR, server, dir, "get_weather", ["city=Paris", "days=2"]);
    check(JSON.stringify(sent) === '{"city":"Paris","days":2}', `days=2 sent as ${JSON.stringify(sent)}`);
    check(!result.isError, `days=2 refused: ${textOf(result)}`);
    check(result.structuredContent.days === 2, `days=2 read as ${JSON.stringify(result.structuredContent)}`);
    check(result.structuredContent.celsius.length === 2, `two days: ${JSON.stringify(result.structuredContent)}`);

    // A required integer, and an integer with a default.
    ({ result, sent } = inspect(INSPECTOR, server, dir, "count_slowly", ["to=3", "step_ms=0"]));
    check(JSON.stringify(sent) === '{"to":3,"step_ms":0}', `to=3 sent as ${JSON.stringify(sent)}`);
    check(!result.isError && textOf(result).includes("3"), `to=3: ${textOf(result)}`);

    // The server's range, said in the model's terms.
    ({ result, sent } = inspect(INSPECTOR, server, dir, "get_weather", ["city=Paris", "days=17"]));
    check(result.isError === true, `days=17 accepted: ${textOf(result)}`);
    check(textOf(result).includes("`days` must be at most 16"), `days=17: ${textOf(result)}`);

    // Never the other way: a string field keeps "2"...
    ({ result, sent } = inspect(INSPECTOR, server, dir, "get_weather", ['city="2"', "days=1"]));
    check(JSON.stringify(sent) === '{"city":"2","days":1}', `city="2" sent as ${JSON.stringify(sent)}`);
    check(!result.isError && result.structuredContent.city === "2", `city="2": ${JSON.stringify(result)}`);
    // ...and the number the Inspector makes of `city=2` is not read as one.
    ({ result, sent } = inspect(INSPECTOR, server, dir, "get_weather", ["city=2"]));
    check(JSON.stringify(sent) === '{"city":2}', `city=2 sent as ${JSON.stringify(sent)}`);
    check(result.isError === true, `a number for a string accepted: ${JSON.stringify(result)}`);
    check(textOf(result).includes("at `city`: invalid type: integer `2`, expected a string"), textOf(result));

    // The issue's command through Inspector 0.16's CLI: "2" reaches the
    // server, which reads it as 2, and the string field keeps "2".
    ({ result, sent } = inspect(INSPECTOR_0_16, server, dir, "get_weather", ["city=Paris", "days=2"]));
    check(JSON.stringify(sent) === '{"city":"Paris","days":"2"}', `0.16: days=2 sent as ${JSON.stringify(sent)}`);
    check(!result.isError, `0.16: days="2" refused: ${textOf(result)}`);
    check(result.structuredContent.days === 2, `0.16: days="2" read as ${JSON.stringify(result.structuredContent)}`);
    ({ result, sent } = inspect(INSPECTOR_0_16, server, dir, "get_weather", ["city=2", "days=1"]));
    check(JSON.stringify(sent) === '{"city":"2","days":"1"}', `0.16: city=2 sent as ${JSON.stringify(sent)}`);
    check(!result.isError && result.structuredContent.city === "2", `0.16: city="2": ${JSON.stringify(result)}`);
    ({ result, sent } = inspect(INSPECTOR_0_16, server, dir, "get_weather", ["city=Paris", "days=2.5"]));
    check(JSON.stringify(sent) === '{"city":"Paris","days":"2.5"}', `0.16: days=2.5 sent as ${JSON.stringify(sent)}`);
    check(result.isError === true, `0.16: days="2.5" accepted: ${JSON.stringify(result)}`);
    check(
      textOf(result).includes('at `days`: expected an integer, not the string "2.5", which is not a whole number'),
      `0.16: days="2.5": ${textOf(result)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("the MCP Inspector's CLI, 2.12.0 and 0.16.5: every check passed");
}

if (process.argv[2] === "tap") {
  tap(process.argv[3], process.argv[4]);
} else {
  main();
}
