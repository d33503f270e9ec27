// What the JavaScript checks share (these and tests/browser's): the
// repository's root, a check that throws, and an example built by cargo
// (and started, for one that serves HTTP).

import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export function check(condition, what) {
  if (!condition) throw new Error(what);
}

export function buildServer() {
  return buildExample("mcp_server");
}

export function buildExample(name) {
  // The test command's selection and features, so cargo reuses its build.
  const out = execFileSync(
    "cargo",
    ["build", "--workspace", "--all-features", "--example", name, "--message-format=json", "--quiet"],
    { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 28 },
  );
  for (const line of out.split("\n")) {
    if (!line) continue;
    const msg = JSON.parse(line);
    if (msg.reason === "compiler-artifact" && msg.target.name === name && msg.executable) {
      return msg.executable;
    }
  }
  throw new Error("cargo did not report the example's executable");
}

// The example's executable, built once per script: a restarted example is
// the same build.
const built = new Map();

// An example that serves HTTP, started offline on a free port, with `env`
// over the environment: resolves to the URL of its `listening on` line and
// the child process (for a test that kills it). It is killed however this
// script ends.
export async function startExample(name, { env: extra = {}, waitMs = 30_000 } = {}) {
  if (!built.has(name)) built.set(name, buildExample(name));
  const binary = built.get(name);
  // Offline whatever the environment: with a key the example would ask OpenAI.
  const env = { ...process.env, PORT: "0" };
  delete env.OPENAI_API_KEY;
  Object.assign(env, extra);
  const child = spawn(binary, [], { cwd: ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
  process.on("exit", () => child.kill());
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise((_, reject) =>
    child.once("exit", (code, signal) => reject(new Error(`${name} exited (${signal ?? code}) before listening`))),
  );
  const listening = new Promise((resolve) => {
    lines.on("line", (line) => {
      const url = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line.trim())?.[1];
      if (url) resolve(url);
    });
  });
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} printed no listening line in ${waitMs} ms`)), waitMs);
  });
  const url = await Promise.race([listening, exited, guard]).finally(() => clearTimeout(timer));
  return { url, child };
}
