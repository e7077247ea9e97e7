// Replicas on one node agent of its own (no control plane): READY only once an engine shows up on
// its GPUs (a recorded nvidia-smi), engines run as the engine user, and Drain waiting for a
// replica's in-flight request. The rest of the agent: agent.test.ts.
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { ReplicaStatus__Output } from "../../common/proto.ts";
import { startAgent } from "../../agent/server.ts";
import { agentClient } from "../../agent/client.ts";
import { engineAuth } from "../../common/engine-key.ts";
import { TOKEN, NODE, portBase, ca, controlTls, NO_GPUS, waitFor, health, track } from "../helpers/agent-harness.ts";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/nvidia-smi");
const H100_0 = "GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15";

/** An agent of its own (no control plane) on a fresh data directory, closed and cleaned after `t`. */
async function soloAgent(t: { after: (fn: () => Promise<void>) => void }, extra: Partial<Parameters<typeof startAgent>[0]> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-agent-solo-"));
  fs.chmodSync(dir, 0o711); // an engine user passes through to its own directory
  await ca.keepFor(dir, NODE); // no control plane to enrol with
  const agent = await startAgent({
    dataDir: dir,
    nodeId: NODE,
    host: "127.0.0.1",
    port: 0,
    controlAddress: null,
    clusterToken: TOKEN,
    heartbeatMs: 60_000,
    metricsPort: null,
    enginePortMin: portBase,
    enginePortMax: portBase + 99,
    stopEnginesOnExit: true,
    labels: {},
    nvidiaSmi: NO_GPUS,
    ...extra,
  });
  const client = agentClient(`127.0.0.1:${agent.port}`, TOKEN, controlTls);
  t.after(async () => {
    client.close();
    await agent.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { agent, client, dir };
}

test("on a GPU node a replica is READY only once its process group shows up on its GPUs", { timeout: 60_000 }, async (t) => {
  // The recorded H100 node, its compute apps rewritten as the engine comes up.
  const rec = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-agent-smi-"));
  fs.cpSync(path.join(FIXTURES, "535-h100"), rec, { recursive: true });
  fs.writeFileSync(path.join(rec, "compute-apps.csv"), "");
  const smi = path.join(rec, "nvidia-smi");
  fs.writeFileSync(smi, `#!/bin/sh\nexec bash ${JSON.stringify(path.join(FIXTURES, "replay.sh"))} ${JSON.stringify(rec)} "$@"\n`, { mode: 0o755 });
  t.after(() => fs.rmSync(rec, { recursive: true, force: true }));
  const { client } = await soloAgent(t, { nvidiaSmi: smi });

  const info = await client.describe();
  assert.deepEqual(info.gpus.map((g) => [g.index, g.uuid, g.pcieWidthCurrent, g.pcieWidthMax]).at(0), [0, H100_0, 16, 16]);
  assert.equal(info.gpus.length, 4);

  const r = track(await client.startReplica({ replicaId: "rg", model: "sim-chat", version: "v1", engine: "sim", gpus: [0] }));
  await waitFor("rg health", async () => (await health(r.url)) === 200);
  // /health answers, but nvidia-smi shows nothing of the engine on GPU 0 (one more poll included).
  assert.equal(stateOf(await client.listReplicas(), "rg"), "REPLICA_STATE_STARTING");
  await new Promise((res) => setTimeout(res, 600));
  assert.equal(stateOf(await client.listReplicas(), "rg"), "REPLICA_STATE_STARTING");
  // A process of its group on another GPU is not enough; on GPU 0 it is.
  fs.writeFileSync(path.join(rec, "compute-apps.csv"), `${r.pid}, GPU-9b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e, 900\n`);
  await new Promise((res) => setTimeout(res, 600));
  assert.equal(stateOf(await client.listReplicas(), "rg"), "REPLICA_STATE_STARTING");
  fs.writeFileSync(path.join(rec, "compute-apps.csv"), `${r.pid}, ${H100_0}, 900\n`);
  await waitFor("rg READY", async () => stateOf(await client.listReplicas(), "rg") === "REPLICA_STATE_READY");
  await client.stopReplica({ replicaId: "rg", graceMs: 2000 });
});

function stateOf(list: { replicas: ReplicaStatus__Output[] }, id: string): string | undefined {
  return list.replicas.find((r) => r.replicaId === id)?.state;
}

const ENGINE_USER = "llmgw-engine";

test("engines run as LLMGW_ENGINE_USER, owning their log and directory; a missing user stops the agent", { timeout: 60_000 }, async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip("not root: only root starts engines as another user (run as root to cover LLMGW_ENGINE_USER)");
    return;
  }
  if (spawnSync("id", ["-u", ENGINE_USER]).status !== 0) {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ENGINE_USER], { encoding: "utf8" });
    assert.equal(made.status, 0, `useradd ${ENGINE_USER}: ${made.stderr}`);
  }
  const uid = Number(spawnSync("id", ["-u", ENGINE_USER], { encoding: "utf8" }).stdout);
  const gid = Number(spawnSync("id", ["-g", ENGINE_USER], { encoding: "utf8" }).stdout);
  assert.ok(uid > 0);

  const noUserDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-agent-nouser-"));
  t.after(() => fs.rmSync(noUserDir, { recursive: true, force: true }));
  await assert.rejects(
    startAgent({ dataDir: noUserDir, nodeId: NODE, host: "127.0.0.1", port: 0, controlAddress: null, clusterToken: TOKEN, metricsPort: null, engineUser: "llmgw-no-such-user-x9" }),
    /LLMGW_ENGINE_USER "llmgw-no-such-user-x9": no such user on this node/,
  );

  const { client, dir } = await soloAgent(t, { engineUser: ENGINE_USER });
  const r = track(await client.startReplica({ replicaId: "ru", model: "sim-chat", version: "v1", engine: "sim" }));
  await waitFor("ru READY", async () => stateOf(await client.listReplicas(), "ru") === "REPLICA_STATE_READY");
  // Real, effective, saved and filesystem ids: all the engine user's.
  const status = fs.readFileSync(`/proc/${r.pid}/status`, "utf8");
  assert.match(status, new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, "m"));
  assert.match(status, new RegExp(`^Gid:\\s+${gid}\\s+${gid}\\s+${gid}\\s+${gid}$`, "m"));
  const nodeDirSolo = path.join(dir, "agent", NODE);
  assert.equal(fs.statSync(path.join(nodeDirSolo, "logs", "ru.log")).uid, uid);
  const home = path.join(nodeDirSolo, "data", "ru");
  assert.equal(fs.statSync(home).uid, uid);
  const environ = fs.readFileSync(`/proc/${r.pid}/environ`, "utf8").split("\0");
  assert.ok(environ.includes(`HOME=${home}`));
  // The engine user can write its directory and its log from outside the agent too.
  const wrote = spawnSync("sh", ["-c", 'touch "$0/probe" && echo appended >> "$1"', home, path.join(nodeDirSolo, "logs", "ru.log")], { uid, gid, encoding: "utf8" });
  assert.equal(wrote.status, 0, wrote.stderr);
  await client.stopReplica({ replicaId: "ru", graceMs: 2000 });
  assert.equal(fs.existsSync(home), false);

  // Fetched weights: the engine user reads them and cannot change them.
  const body = Buffer.alloc(4096, 3);
  const server = http.createServer((_req, res) => res.end(body));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const got = await client.fetch({ source: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/m/model.gguf` });
  assert.ok(got.path.startsWith(path.join(dir, "weights")));
  const read = spawnSync("sh", ["-c", 'cat "$0" | wc -c; touch "$0" 2>/dev/null && echo writable || echo read-only', got.path], { uid, gid, encoding: "utf8" });
  assert.equal(read.stdout.trim().split("\n").join(" "), "4096 read-only", read.stderr);
});

/** Starts a streamed chat completion of `tokens` tokens (with replica `id`'s key) and resolves with the text once it ends. */
function streamChat(url: string, id: string, tokens: number): Promise<{ status: number; chunks: number }> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...engineAuth(TOKEN, id) },
    body: JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "slow" }], max_tokens: tokens, stream: true }),
  }).then(async (res) => ({ status: res.status, chunks: (await res.text()).split("\n\n").filter((l) => l.startsWith("data: {")).length }));
}

async function engineRunning(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^vllm:num_requests_running(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1] ?? NaN);
}

test("Drain: a replica is reported DRAINING and the call waits for its in-flight request, or the grace", { timeout: 60_000 }, async (t) => {
  const { client } = await soloAgent(t);
  // 20 tokens a second: a 30-token answer takes 1.5 s, a 400-token one 20 s.
  const r = track(await client.startReplica({ replicaId: "rd", model: "sim-chat", version: "v1", engine: "sim", args: ["--tokens-per-second", "20"] }));
  await waitFor("rd READY", async () => stateOf(await client.listReplicas(), "rd") === "REPLICA_STATE_READY");

  await t.test("with a request streaming, Drain returns once it finished: 0 in flight", async () => {
    const answer = streamChat(r.url, "rd", 30);
    await waitFor("the request to run", async () => (await engineRunning(r.url)) === 1);
    const drained = client.drain({ replicaId: "rd", graceMs: 20_000 }, { timeoutMs: 30_000 });
    await waitFor("rd DRAINING", async () => stateOf(await client.listReplicas(), "rd") === "REPLICA_STATE_DRAINING");
    const res = await drained;
    assert.equal(res.inFlight, 0);
    // The request was let finish, whole: every token came.
    const done = await answer;
    assert.equal(done.status, 200);
    assert.ok(done.chunks >= 30, `all 30 tokens streamed, got ${done.chunks} chunks`);
    assert.equal(await engineRunning(r.url), 0);
    // Drained stays drained: never reported READY again while it runs.
    assert.equal(stateOf(await client.listReplicas(), "rd"), "REPLICA_STATE_DRAINING");
  });

  await t.test("when the grace passes first, Drain returns the request still in flight: 1", async () => {
    const ac = new AbortController();
    const answer = fetch(`${r.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...engineAuth(TOKEN, "rd") },
      body: JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "long" }], max_tokens: 400, stream: true }),
      signal: ac.signal,
    }).then((res) => res.text()).catch(() => "");
    await waitFor("the request to run", async () => (await engineRunning(r.url)) === 1);
    const res = await client.drain({ replicaId: "rd", graceMs: 500 }, { timeoutMs: 10_000 });
    assert.equal(res.inFlight, 1);
    assert.ok(Number(res.waitedMs) >= 500);
    ac.abort();
    await answer;
  });

  await t.test("an unknown replica has nothing in flight; a stopped one loses its mark", async () => {
    assert.equal((await client.drain({ replicaId: "no-such", graceMs: 100 })).inFlight, 0);
    await client.stopReplica({ replicaId: "rd", graceMs: 2000 });
    // Started again under the same id, it is a new engine: READY, not still draining.
    track(await client.startReplica({ replicaId: "rd", model: "sim-chat", version: "v1", engine: "sim" }));
    await waitFor("rd READY again", async () => stateOf(await client.listReplicas(), "rd") === "REPLICA_STATE_READY");
    await client.stopReplica({ replicaId: "rd", graceMs: 2000 });
  });
});
