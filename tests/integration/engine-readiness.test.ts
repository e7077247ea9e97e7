// The supervisor marks a replica READY by its engine adapter's reading of the health answer, status
// and body: a stand-in llama-server answering /health as llama-server does (503 "Loading model" in
// its OpenAI-style error body, then 200 {"status":"ok"}) stays STARTING while it loads, with the
// reason read from the body, and is READY once loaded.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import type { HealthReading } from "../../agent/engines/adapter.ts";
import { llamaServer } from "../../agent/engines/llama-server.ts";
import { Supervisor } from "../../agent/supervisor/replicas.ts";
import { freePort } from "../helpers/platform.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-readiness-"));
const loaded = path.join(dir, "loaded");
const script = path.join(dir, "llama-server-health.mjs");
// llama-server's /health, byte for byte (tests/fixtures/health): loading until the flag file exists.
fs.writeFileSync(
  script,
  `import fs from "node:fs";
import http from "node:http";
const [port, flag] = process.argv.slice(2);
http.createServer((req, res) => {
  if (req.url !== "/health") return void res.writeHead(404).end();
  const ready = fs.existsSync(flag);
  const body = ready ? '{"status":"ok"}' : '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}';
  res.writeHead(ready ? 200 : 503, { "Content-Type": "application/json; charset=utf-8", Server: "llama.cpp" }).end(body);
}).listen(Number(port), "127.0.0.1");
`,
);

let sup: Supervisor | undefined;
after(async () => {
  await sup?.close(true);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function waitFor(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((res) => setTimeout(res, 50));
  assert.ok(ok(), `timed out waiting for ${what}`);
}

test("a llama-server replica is STARTING while /health says it loads, READY once it says ok", { timeout: 30_000 }, async () => {
  const seen: HealthReading[] = [];
  const port = await freePort();
  sup = new Supervisor({
    dir: path.join(dir, "agent"),
    portMin: port,
    portMax: port,
    repoRoot: process.cwd(),
    urlHost: "127.0.0.1",
    engineHost: "127.0.0.1",
    engineKey: (id) => `key-${id}`,
    nvidiaSmi: "nvidia-smi",
    engines: {
      "llama-server": {
        ...llamaServer,
        command: (s) => ({ command: process.execPath, args: [script, String(s.port), loaded] }),
        readHealth: (status, body) => {
          const reading = llamaServer.readHealth!(status, body);
          seen.push(reading);
          return reading;
        },
      },
    },
  });
  const state = () => sup!.list().find((r) => r.replicaId === "lr")?.state;
  const started = await sup.start({ replicaId: "lr", model: "chat", version: "v1", engine: "llama-server", args: [], env: {}, gpus: [], weights: "/w/model.gguf", contextLength: 0 });
  assert.equal(started.state, "REPLICA_STATE_STARTING");

  await waitFor("three loading answers", () => seen.length >= 3);
  assert.equal(state(), "REPLICA_STATE_STARTING");
  assert.deepEqual(seen[0], { ready: false, reason: "loading model" }, "the reason comes from the body the supervisor read");

  fs.writeFileSync(loaded, "");
  await waitFor("READY", () => state() === "REPLICA_STATE_READY");
  assert.deepEqual(seen.at(-1), { ready: true });
  assert.ok(await sup.stop("lr", 2000));
});
