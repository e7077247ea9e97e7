// Serving fetches the weights first: a sim model whose version's source is an http URL on a mirror
// this test serves slowly. The fetch activity's heartbeat timeout (LLMGW_FETCH_STALL_MS, 2 s here)
// is shorter than the download (2 MiB over about 6 s): only heartbeats on each progress message
// let its first attempt finish. A wrong sha256 or a pickle file fails the serve, and nothing runs.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Client, Connection } from "@temporalio/client";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const STALL_MS = 2000;
const CHUNK = 64 << 10;
const CHUNK_EVERY_MS = 190; // 32 chunks: about 6 s
const slow = Buffer.alloc(2 << 20);
for (let i = 0; i < slow.length; i++) slow[i] = (i * 31 + (i >> 9)) & 0xff;
const small = Buffer.alloc(256 << 10, 7);
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const served = new Map<string, Buffer>([
  ["/w/slow.safetensors", slow],
  ["/w/small.safetensors", small],
  ["/w/pickled.bin", small],
]);
const requests: string[] = [];
/** When each response of the slow file ended, minus when it began. */
const slowSendMs: number[] = [];

const mirror = http.createServer((req, res) => {
  const p = req.url ?? "/";
  requests.push(p);
  const body = served.get(p);
  if (!body) return void res.writeHead(404).end();
  res.writeHead(200, { "content-length": body.length });
  if (body !== slow) return void res.end(body);
  const began = Date.now();
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    res.write(body.subarray(at, at + CHUNK));
    at += CHUNK;
    if (at < body.length) setTimeout(next, CHUNK_EVERY_MS);
    else res.end(() => slowSendMs.push(Date.now() - began));
  };
  next();
});

type Operation = {
  status: string;
  error: string | null;
  progress: { phase: string; message: string; fetch?: Record<string, { bytes: number; total: number; bytesPerSecond: number; done: boolean }> } | null;
};

describe("serving fetches the weights first", () => {
  let p: Platform;
  let base: string;
  let temporal: Connection;

  before(async () => {
    await new Promise<void>((resolve) => mirror.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
    p = await startPlatform({ env: { LLMGW_FETCH_STALL_MS: String(STALL_MS) } });
    temporal = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? "127.0.0.1:7233" });
  });

  after(async () => {
    await temporal?.close();
    await p?.stop();
    mirror.closeAllConnections();
    mirror.close();
  });

  /** The fetchWeights activities an operation ran (their started events: the last attempt of each). */
  async function fetchActivitiesStarted(operationId: string) {
    const client = new Client({ connection: temporal, namespace: p.env.LLMGW_TEMPORAL_NAMESPACE });
    const history = await client.workflow.getHandle(operationId).fetchHistory();
    const scheduled = new Map<string, string>();
    for (const e of history.events ?? []) {
      const s = e.activityTaskScheduledEventAttributes;
      if (s) scheduled.set(String(e.eventId), s.activityType?.name ?? "");
    }
    return (history.events ?? []).map((e) => e.activityTaskStartedEventAttributes).filter((a) => a && scheduled.get(String(a.scheduledEventId)) === "fetchWeights");
  }

  /** Adds a one-version sim model with `source`, serves it, and follows the operation to its end. */
  async function serve(model: string, source: Record<string, string>, opts: { allowPickle?: boolean; replicas?: number } = {}) {
    await p.admin("POST", "/models", { name: model, allow_pickle: opts.allowPickle ?? false, versions: [{ version: "v1", engine: "sim", source }] });
    const { operationId } = await p.admin<{ operationId: string }>("POST", `/models/${model}/serve`, { replicas: opts.replicas ?? 1 });
    const seen: Operation[] = [];
    for (let i = 0; i < 600; i++) {
      const op = await p.admin<Operation>("GET", `/operations/${operationId}`);
      seen.push(op);
      if (op.status !== "RUNNING" && op.status !== "QUEUED") return { operationId, final: op, seen };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`operation ${operationId} did not end: ${JSON.stringify(seen.at(-1))}`);
  }

  it("fetches a slow download whole (heartbeats keep it alive), starts the engine on it, and serves", async () => {
    const model = uniqueModel("fetch-slow");
    const { operationId, final, seen } = await serve(model, { url: `${base}/w/slow.safetensors`, sha256: sha(slow) });
    assert.equal(final.status, "COMPLETED", JSON.stringify(final));
    // The download outlasted the heartbeat timeout: otherwise this test proves nothing.
    assert.equal(slowSendMs.length, 1);
    assert.ok(slowSendMs[0]! > STALL_MS * 2, `the mirror sent for ${slowSendMs[0]} ms`);
    assert.equal(requests.filter((r) => r === "/w/slow.safetensors").length, 1, "one download");

    // The operation's progress showed the fetch as it went: bytes part way, then all of them.
    const node = p.env.LLMGW_NODE_ID!;
    const partWay = seen.map((o) => o.progress?.fetch?.[node]).filter((f) => f && !f.done && f.bytes > 0 && f.bytes < slow.length);
    assert.ok(partWay.length > 0, "fetch bytes part way in the progress");
    assert.ok(partWay.every((f) => f!.total === slow.length));
    assert.ok(seen.some((o) => o.progress?.phase === "fetching"));
    assert.deepEqual(
      { bytes: final.progress?.fetch?.[node]?.bytes, done: final.progress?.fetch?.[node]?.done },
      { bytes: slow.length, done: true },
    );

    // The file arrived whole, in the node's cache under its checksum.
    const file = path.join(p.dataDir, "weights", "sha256", sha(slow), "slow.safetensors");
    assert.equal(sha(fs.readFileSync(file)), sha(slow));

    // The fetch activity's first attempt finished: heartbeats, not retries, carried it.
    const started = await fetchActivitiesStarted(operationId);
    assert.equal(started.length, 1);
    assert.equal(started[0]!.attempt, 1);

    // The engine was started on the fetched file, and serves through the gateway.
    const pids = p.enginePids(model);
    assert.equal(pids.length, 1);
    assert.ok(fs.readFileSync(`/proc/${pids[0]}/environ`, "utf8").split("\0").includes(`LLMGW_WEIGHTS=${file}`));
    assert.equal((await p.ctl(["projects", "create", "fetch"])).code, 0);
    const key = (JSON.parse((await p.ctl(["keys", "create", "--project", "fetch", "--json"])).stdout) as { key: string }).key;
    const openai = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    const r = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 3 });
    assert.equal(r.usage?.completion_tokens, 3);
  });

  it("a wrong sha256 fails the serve with the checksum message, and leaves no engine running", async () => {
    const model = uniqueModel("fetch-bad-sum");
    const wrong = "0".repeat(64);
    const { final } = await serve(model, { url: `${base}/w/small.safetensors`, sha256: wrong });
    assert.equal(final.status, "FAILED");
    assert.match(final.error ?? "", new RegExp(`sha256 is ${sha(small)}, expected ${wrong}`));
    assert.equal(final.progress?.phase, "failed");
    assert.match(final.progress?.message ?? "", /sha256 is [0-9a-f]{64}, expected 0{64}/);
    // Not retried: the agent fetches a mismatching file twice, then refuses it, once.
    assert.equal(requests.filter((r) => r === "/w/small.safetensors").length, 2);
    assert.deepEqual(p.enginePids(model), []);
    const show = JSON.parse((await p.ctl(["model", "show", model, "--json"])).stdout) as { replicas: unknown[]; state: { operations: { state: string; error?: string }[] } };
    assert.deepEqual(show.replicas, []);
    assert.match(show.state.operations.at(-1)?.error ?? "", /sha256 is [0-9a-f]{64}, expected 0{64}/);
  });

  it("pickle weights are refused before any download unless the catalog allows them; replicas on one node share one fetch", async () => {
    const refused = await serve(uniqueModel("fetch-pickle"), { url: `${base}/w/pickled.bin` });
    assert.equal(refused.final.status, "FAILED");
    assert.match(refused.final.error ?? "", /pickle format/);
    assert.equal(requests.filter((r) => r === "/w/pickled.bin").length, 0);

    // Two replicas on the one node: one fetch for both, one download.
    const model = uniqueModel("fetch-pickle-ok");
    const allowed = await serve(model, { url: `${base}/w/pickled.bin` }, { allowPickle: true, replicas: 2 });
    assert.equal(allowed.final.status, "COMPLETED", JSON.stringify(allowed.final));
    assert.equal(requests.filter((r) => r === "/w/pickled.bin").length, 1);
    assert.equal((await fetchActivitiesStarted(allowed.operationId)).length, 1);
    assert.equal(p.enginePids(model).length, 2);
  });
});
