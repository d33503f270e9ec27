#!/usr/bin/env node
// The `add` tool on the TypeScript SDK's own server (McpServer, a zod
// schema, StreamableHTTPServerTransport with sessions, on node:http), for
// benches/mcp_keepalive.rs. Prints its URL on stdout, then serves until
// killed. The SDK comes from tests/typescript (npm ci --prefix tests/typescript).

import { createServer } from "node:http";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import path from "node:path";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(path.join(ROOT, "tests/typescript/package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const { z } = require("zod");

function newServer() {
  const server = new McpServer({ name: "ts-add", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Add two numbers.", inputSchema: { a: z.number().int(), b: z.number().int() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return server;
}

// One transport per session, as the SDK's README shows.
const sessions = new Map();

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const http = createServer(async (request, response) => {
  try {
    const id = request.headers["mcp-session-id"];
    const body = request.method === "POST" ? await readJson(request) : undefined;
    let transport = id ? sessions.get(id) : undefined;
    if (!transport && request.method === "POST" && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    if (!transport) {
      response.writeHead(400).end("no session");
      return;
    }
    await transport.handleRequest(request, response, body);
  } catch (error) {
    if (!response.headersSent) response.writeHead(500).end(String(error));
  }
});

http.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${http.address().port}/mcp`);
});
