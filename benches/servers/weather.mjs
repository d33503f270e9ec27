#!/usr/bin/env node
// The example's get_weather on the official TypeScript SDK's McpServer (a
// zod schema, StdioServerTransport), for benches/mcp_servers.rs: the same
// tool as examples/mcp_server.rs and benches/fastmcp/server.py. The SDK
// comes from tests/typescript (npm ci --prefix tests/typescript).

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(path.join(ROOT, "tests/typescript/package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "weather-typescript", version: "1.0.0" });
server.registerTool(
  "get_weather",
  {
    description: "Daily temperatures in °C for a city.",
    inputSchema: {
      city: z.string().describe('City name, e.g. "Paris".'),
      days: z.number().int().min(1).max(16).optional().describe("Days ahead to forecast, 1 to 16 (default 1)."),
    },
  },
  async ({ city, days }) => {
    if (!city.trim()) throw new Error("`city` is empty: ask again with a city name");
    const n = days ?? 1;
    const seed = [...Buffer.from(city)].reduce((sum, byte) => sum + byte, 0) % 15;
    const forecast = { city, days: n, celsius: Array.from({ length: n }, (_, day) => 10 + seed + (day % 4)) };
    return { content: [{ type: "text", text: JSON.stringify(forecast) }], structuredContent: forecast };
  },
);
await server.connect(new StdioServerTransport());
