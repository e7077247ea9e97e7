// Each engine's health answers read the way that engine serves them (tests/fixtures/health): what
// marks a replica READY, and the reason it is not (loading, failed, dead) while it is not.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { readHealthStatus, type HealthReading } from "../../agent/engines/adapter.ts";
import { ENGINES } from "../../agent/engines/registry.ts";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", "health");

/** A recorded HTTP answer: the status from its status line, the body after the blank line. */
function answer(file: string): { status: number; body: string } {
  const text = fs.readFileSync(path.join(FIXTURES, file), "utf8");
  const split = text.indexOf("\n\n");
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]);
  assert.ok(split > 0 && Number.isInteger(status), `${file} is not an HTTP answer`);
  return { status, body: text.slice(split + 2) };
}

const EXPECTED: [engine: string, file: string, reading: HealthReading][] = [
  ["llama-server", "llama-server-ok.http", { ready: true }],
  ["llama-server", "llama-server-loading.http", { ready: false, reason: "loading model" }],
  ["llama-server", "llama-server-2024-ok.http", { ready: true }],
  ["llama-server", "llama-server-2024-loading.http", { ready: false, reason: "loading model" }],
  ["llama-server", "llama-server-2024-error.http", { ready: false, reason: "the model failed to load" }],
  ["llama-server", "llama-server-2024-no-slot.http", { ready: true, reason: "all slots busy" }],
  ["vllm", "vllm-ok.http", { ready: true }],
  ["vllm", "vllm-dead.http", { ready: false, reason: "the engine is dead (health answered 503)" }],
  ["vllm", "vllm-v0-dead.http", { ready: false, reason: "the engine is dead (health answered 500)" }],
  ["sglang", "sglang-ok.http", { ready: true }],
  ["sglang", "sglang-starting.http", { ready: false, reason: "starting, stopping, or failing its one-token check (health answered 503)" }],
];

for (const [engine, file, reading] of EXPECTED) {
  test(`${engine} reads ${file}`, () => {
    const { status, body } = answer(file);
    assert.deepEqual(ENGINES[engine]!.readHealth!(status, body), reading);
  });
}

test("every fixture is read by some case", () => {
  const used = new Set(EXPECTED.map(([, file]) => file));
  assert.deepEqual(fs.readdirSync(FIXTURES).filter((f) => f.endsWith(".http") && !used.has(f)), []);
});

test("an answer no engine documents is not ready, and says what came back", () => {
  for (const engine of ["llama-server", "vllm", "sglang"]) {
    assert.deepEqual(ENGINES[engine]!.readHealth!(404, '{"detail":"Not Found"}'), { ready: false, reason: "health answered 404: Not Found" });
    assert.deepEqual(ENGINES[engine]!.readHealth!(502, "<html>bad gateway</html>"), { ready: false, reason: "health answered 502" });
  }
});

test("a 503 that is neither loading nor a known body still carries llama-server's message", () => {
  const body = JSON.stringify({ error: { code: 503, message: "Server is shutting down", type: "unavailable_error" } });
  assert.deepEqual(ENGINES["llama-server"]!.readHealth!(503, body), { ready: false, reason: "server is shutting down" });
});

test("engines without a reader of their own: 200 is ready, anything else is not", () => {
  assert.deepEqual(readHealthStatus(200, ""), { ready: true });
  assert.deepEqual(readHealthStatus(503, '{"error":{"message":"warming up"}}'), { ready: false, reason: "health answered 503: warming up" });
});
