// What the JavaScript checks share (these and tests/browser's): the
// repository's root, a check that throws, and an example built by cargo.

import { execFileSync } from "node:child_process";
import path from "node:path";
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
