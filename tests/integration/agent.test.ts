// The node agent end to end, in-process: a fake Control service (enrolling agents with a CA of the
// test's own, tests/helpers/tls.ts) records Register and Heartbeat; real `sim` engine processes
// are started, made idempotently, adopted by a second agent after the first one closes, stopped,
// and killed from outside. Calls to the agent go over mutual TLS as the control plane's do (who
// else is refused: tests/integration/agent-tls.test.ts).
import { freePort } from "../helpers/platform.ts";
import { test, after } from "node:test";
import { spawnSync } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { agentProto, hasClusterToken, type ControlHandlers, type NodeInfo__Output, type ReplicaStatus__Output } from "../../common/proto.ts";
import type { HeartbeatRequest__Output } from "../../common/generated/proto/llmgw/agent/v1/HeartbeatRequest.ts";
import { startAgent, clusterToken, type RunningAgent } from "../../agent/server.ts";
import { agentClient, type AgentApi } from "../../agent/client.ts";
import { enrolmentHandlers, refuseUnlessNode } from "../../gateway/control-grpc/enrolment.ts";
import { dial, serverCredentials } from "../../common/tls/credentials.ts";
import { testCa } from "../helpers/tls.ts";
import { engineAuth } from "../../common/engine-key.ts";

const TOKEN = "test-cluster-token-" + Math.random().toString(36).slice(2);
const NODE = "node-agent-test";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-agent-test-"));
const nodeDir = path.join(dataDir, "agent", NODE);
const portBase = 20000 + Math.floor(Math.random() * 400) * 100;
const ca = await testCa();
/** What the control plane's activities call agents with: a spiffe://llmgw/control certificate. */
const controlTls = await ca.tls();
const NO_GPUS = path.join(dataDir, "no-nvidia-smi"); // no GPUs, even on a GPU machine

const agents: RunningAgent[] = [];
const clients: AgentApi[] = [];
const pids = new Set<number>();
let control: grpc.Server | undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie has an empty command line.
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").length > 0;
  } catch {
    return !fs.existsSync("/proc/self");
  }
}

/** Processes running the sim engine on `port`. */
function simProcessesOn(port: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (argv.some((a) => a.endsWith("/engines/sim/main.ts")) && argv.includes(String(port))) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function health(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}


function grpcCode(err: unknown): number | undefined {
  return (err as grpc.ServiceError).code;
}

after(async () => {
  for (const c of clients) c.close();
  for (const a of agents) await a.close().catch(() => undefined);
  control?.forceShutdown();
  // Every engine this test started dies, whatever happened.
  try {
    for (const f of fs.readdirSync(path.join(nodeDir, "replicas"))) {
      const rec = JSON.parse(fs.readFileSync(path.join(nodeDir, "replicas", f), "utf8")) as { pid?: number };
      if (typeof rec.pid === "number") pids.add(rec.pid);
    }
  } catch {
    /* no records */
  }
  for (const pid of pids) if (pid > 1 && alive(pid)) killGroup(pid);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const registers: NodeInfo__Output[] = [];
const heartbeats: HeartbeatRequest__Output[] = [];
let rejected = 0;

async function startControl(port: number): Promise<void> {
  const server = new grpc.Server();
  const handlers: ControlHandlers = {
    Register: (call, cb) => {
      if (!hasClusterToken(call, TOKEN)) {
        rejected++;
        return cb({ code: grpc.status.UNAUTHENTICATED, details: "bad token" });
      }
      const refused = refuseUnlessNode(ca.issuing, call, call.request.node?.nodeId);
      if (refused) {
        rejected++;
        return cb(refused);
      }
      if (call.request.node) registers.push(call.request.node);
      cb(null, { heartbeatIntervalMs: 200 });
    },
    Heartbeat: (call, cb) => {
      if (!hasClusterToken(call, TOKEN)) {
        rejected++;
        return cb({ code: grpc.status.UNAUTHENTICATED, details: "bad token" });
      }
      const refused = refuseUnlessNode(ca.issuing, call, call.request.node?.nodeId);
      if (refused) {
        rejected++;
        return cb(refused);
      }
      heartbeats.push(call.request);
      cb(null, {});
    },
    ...enrolmentHandlers({ tls: ca.issuing, token: TOKEN }),
  };
  server.addService(agentProto().Control.service, handlers);
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, serverCredentials(controlTls, false), (err, p) => (err ? reject(err) : resolve(p))),
  );
  control = server;
}

function track(s: ReplicaStatus__Output): ReplicaStatus__Output {
  if (s.pid > 1) pids.add(s.pid);
  return s;
}

test("the node agent: auth, inventory, control link, engines started, adopted, stopped", { timeout: 120_000 }, async (t) => {
  const controlPort = await freePort();
  const base = {
    dataDir,
    nodeId: NODE,
    host: "127.0.0.1",
    port: 0,
    controlAddress: `127.0.0.1:${controlPort}`,
    clusterToken: TOKEN,
    heartbeatMs: 60_000, // Register answers 200 ms: heartbeats at that pace prove it is honoured
    enginePortMin: portBase,
    enginePortMax: portBase + 99,
    stopEnginesOnExit: false,
    labels: { zone: "test-a" },
    nvidiaSmi: NO_GPUS,
  };
  // The agent comes up before the control plane does: it retries Register and never fails.
  const agent1 = await startAgent(base);
  agents.push(agent1);
  assert.ok(agent1.port > 0);
  await new Promise((r) => setTimeout(r, 300));
  await startControl(controlPort);
  // It enrols with the cluster token (it had no certificate), then registers.
  await waitFor("the agent to enrol and register", () => registers.length > 0);
  assert.ok(fs.existsSync(path.join(nodeDir, "tls", "cert.pem")));
  assert.equal(fs.statSync(path.join(nodeDir, "tls", "key.pem")).mode & 0o777, 0o600);

  const a1 = agentClient(`127.0.0.1:${agent1.port}`, TOKEN, controlTls);
  clients.push(a1);

  await t.test("a call without the cluster token is UNAUTHENTICATED", async () => {
    const wrong = agentClient(`127.0.0.1:${agent1.port}`, "not-the-token", controlTls);
    clients.push(wrong);
    await assert.rejects(wrong.describe(), (e) => grpcCode(e) === grpc.status.UNAUTHENTICATED);
    await assert.rejects(wrong.listReplicas(), (e) => grpcCode(e) === grpc.status.UNAUTHENTICATED);
    await assert.rejects(
      wrong.startReplica({ replicaId: "x", model: "m", engine: "sim" }),
      (e) => grpcCode(e) === grpc.status.UNAUTHENTICATED,
    );
    await assert.rejects(wrong.fetch({ source: "/etc/hostname" }), (e) => grpcCode(e) === grpc.status.UNAUTHENTICATED);
    // No metadata at all.
    const raw = dial(agentProto().Agent, `127.0.0.1:${agent1.port}`, controlTls, "node");
    const code = await new Promise<number | undefined>((resolve) =>
      raw.Describe({}, { deadline: Date.now() + 5000 }, (err) => resolve(err?.code)),
    );
    raw.close();
    assert.equal(code, grpc.status.UNAUTHENTICATED);
  });

  await t.test("Describe reports the node: cores, memory, disk, no GPUs, labels, address", async () => {
    const info = await a1.describe();
    assert.equal(info.nodeId, NODE);
    assert.equal(info.address, `127.0.0.1:${agent1.port}`);
    assert.ok(info.cpuCores > 0);
    assert.ok(info.cpuModel.length > 0);
    assert.ok(info.memoryTotalBytes > 0);
    assert.ok(info.diskFreeBytes > 0);
    assert.deepEqual(info.gpus, []);
    assert.deepEqual(info.labels, { zone: "test-a" });
    assert.equal(info.agentVersion, "0.1.0");
  });

  await t.test("the memory read rate, measured in the background, reaches Describe and heartbeats", async () => {
    const info = await waitFor("a measured memory read rate", async () => {
      const i = await a1.describe();
      return i.memoryReadGbps > 0 && i;
    });
    assert.ok(info.memoryReadGbps < 10_000, `${info.memoryReadGbps} GB/s`);
    await waitFor("a heartbeat with it", () => heartbeats.some((h) => (h.node?.memoryReadGbps ?? 0) > 0));
  });

  await t.test("Register and heartbeats reach the control plane with the node and the token", async () => {
    await waitFor("Register", () => registers.length > 0);
    assert.equal(registers[0]?.nodeId, NODE);
    assert.ok((registers[0]?.cpuCores ?? 0) > 0);
    await waitFor("3 heartbeats at Register's interval", () => heartbeats.length >= 3, 5000);
    assert.equal(heartbeats[0]?.node?.nodeId, NODE);
    assert.equal(rejected, 0);
  });

  let r1!: ReplicaStatus__Output;
  let r2!: ReplicaStatus__Output;

  await t.test("StartReplica starts one sim process that becomes READY; a repeat returns it unchanged", async () => {
    const req = { replicaId: "r1", model: "sim-chat", version: "v1", engine: "sim", args: ["--load-delay-ms", "700"], env: { SIM_TEST_SECRET: "s" } };
    r1 = track(await a1.startReplica(req));
    assert.equal(r1.replicaId, "r1");
    assert.ok(r1.pid > 1);
    assert.ok(r1.port >= portBase && r1.port <= portBase + 99);
    assert.equal(r1.url, `http://127.0.0.1:${r1.port}`);
    assert.equal(r1.state, "REPLICA_STATE_STARTING");
    assert.ok(r1.startedAtMs > 0);
    // The record is on disk before the answer, without args or env; the log is a 0600 file.
    const recFile = path.join(nodeDir, "replicas", "r1.json");
    const rec = JSON.parse(fs.readFileSync(recFile, "utf8")) as Record<string, unknown>;
    assert.equal(rec.pid, r1.pid);
    assert.equal(rec.port, r1.port);
    assert.equal(rec.args, undefined);
    assert.equal(rec.env, undefined);
    assert.equal(fs.statSync(recFile).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.join(nodeDir, "logs", "r1.log")).mode & 0o777, 0o600);

    const ready = await waitFor("r1 READY", async () =>
      (await a1.listReplicas()).replicas.find((r) => r.replicaId === "r1" && r.state === "REPLICA_STATE_READY"),
    );
    assert.equal(ready.pid, r1.pid);
    assert.equal(await health(r1.url), 200);

    const again = await a1.startReplica(req);
    assert.equal(again.pid, r1.pid);
    assert.equal(again.port, r1.port);
    assert.equal(again.state, "REPLICA_STATE_READY");
    assert.deepEqual(simProcessesOn(r1.port), [r1.pid]);
  });

  await t.test("concurrent starts of a second replica make one process, on another port", async () => {
    const req = { replicaId: "r2", model: "sim-chat", version: "v1", engine: "sim", args: [] };
    const [x, y] = await Promise.all([a1.startReplica(req), a1.startReplica(req)]);
    r2 = track(x);
    track(y);
    assert.equal(x.pid, y.pid);
    assert.equal(x.port, y.port);
    assert.notEqual(r2.port, r1.port);
    await waitFor("r2 READY", async () =>
      (await a1.listReplicas()).replicas.find((r) => r.replicaId === "r2" && r.state === "REPLICA_STATE_READY"),
    );
    assert.deepEqual(simProcessesOn(r2.port), [r2.pid]);
  });

  await t.test("an unknown engine and an unknown sim flag are INVALID_ARGUMENT", async () => {
    await assert.rejects(a1.startReplica({ replicaId: "bad1", model: "m", engine: "nope" }), (e) => {
      assert.equal(grpcCode(e), grpc.status.INVALID_ARGUMENT);
      assert.match((e as grpc.ServiceError).details, /unknown engine "nope"/);
      return true;
    });
    await assert.rejects(
      a1.startReplica({ replicaId: "bad2", model: "m", engine: "sim", args: ["--no-such-flag", "1"] }),
      (e) => {
        assert.equal(grpcCode(e), grpc.status.INVALID_ARGUMENT);
        assert.match((e as grpc.ServiceError).details, /refuses/);
        return true;
      },
    );
    await assert.rejects(a1.startReplica({ replicaId: "../x", model: "m", engine: "sim" }), (e) => grpcCode(e) === grpc.status.INVALID_ARGUMENT);
    const ids = (await a1.listReplicas()).replicas.map((r) => r.replicaId).sort();
    assert.deepEqual(ids, ["r1", "r2"]);
  });

  await t.test("heartbeats carry the replicas", async () => {
    await waitFor("a heartbeat with both replicas READY", () =>
      heartbeats.some(
        (h) =>
          h.replicas.filter((r) => r.state === "REPLICA_STATE_READY" && (r.replicaId === "r1" || r.replicaId === "r2")).length === 2,
      ),
    );
  });

  let a2!: AgentApi;
  await t.test("a new agent on the same data dir adopts the engines, which serve throughout", async () => {
    let probes = 0;
    const failures: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const r of [r1, r2]) {
          const code = await health(r.url);
          probes++;
          if (code !== 200) failures.push(`${r.replicaId}: ${code}`);
        }
        await new Promise((res) => setTimeout(res, 25));
      }
    })();

    await agent1.close();
    assert.ok(alive(r1.pid), "r1 survives the agent");
    assert.ok(alive(r2.pid), "r2 survives the agent");
    const registersBefore = registers.length;

    const agent2 = await startAgent({ ...base, stopEnginesOnExit: true });
    agents.push(agent2);
    a2 = agentClient(`127.0.0.1:${agent2.port}`, TOKEN, controlTls);
    clients.push(a2);
    const list = (await a2.listReplicas()).replicas.sort((x, y) => x.replicaId.localeCompare(y.replicaId));
    assert.deepEqual(
      list.map((r) => [r.replicaId, r.pid, r.port, r.state]),
      [
        ["r1", r1.pid, r1.port, "REPLICA_STATE_READY"],
        ["r2", r2.pid, r2.port, "REPLICA_STATE_READY"],
      ],
    );
    // Idempotent across the restart too.
    const again = await a2.startReplica({ replicaId: "r1", model: "sim-chat", engine: "sim" });
    assert.equal(again.pid, r1.pid);
    await waitFor("the second agent registers", () => registers.length > registersBefore);

    await new Promise((res) => setTimeout(res, 300));
    watching = false;
    await watcher;
    assert.ok(probes > 4, `probes: ${probes}`);
    assert.deepEqual(failures, []);
  });

  await t.test("StopReplica kills the process group; a second stop is fine", async () => {
    const res = await a2.stopReplica({ replicaId: "r1", graceMs: 3000 });
    assert.equal(res.wasRunning, true);
    await waitFor("r1's process gone", () => !alive(r1.pid), 5000);
    assert.deepEqual(simProcessesOn(r1.port), []);
    assert.equal(fs.existsSync(path.join(nodeDir, "replicas", "r1.json")), false);
    const again = await a2.stopReplica({ replicaId: "r1" });
    assert.equal(again.wasRunning, false);
    const unknown = await a2.stopReplica({ replicaId: "never-was" });
    assert.equal(unknown.wasRunning, false);
    assert.deepEqual((await a2.listReplicas()).replicas.map((r) => r.replicaId), ["r2"]);
  });

  await t.test("an engine killed from outside shows as EXITED (adopted and spawned)", async () => {
    killGroup(r2.pid);
    const gone = await waitFor("r2 EXITED", async () =>
      (await a2.listReplicas()).replicas.find((r) => r.replicaId === "r2" && r.state === "REPLICA_STATE_EXITED"),
    );
    assert.equal(gone.pid, r2.pid);

    const r3 = track(await a2.startReplica({ replicaId: "r3", model: "sim-chat", engine: "sim" }));
    await waitFor("r3 READY", async () =>
      (await a2.listReplicas()).replicas.find((r) => r.replicaId === "r3" && r.state === "REPLICA_STATE_READY"),
    );
    process.kill(r3.pid, "SIGKILL");
    const dead = await waitFor("r3 EXITED", async () =>
      (await a2.listReplicas()).replicas.find((r) => r.replicaId === "r3" && r.state === "REPLICA_STATE_EXITED"),
    );
    assert.equal(dead.exitCode, 137);
    await waitFor("a heartbeat reporting r3 EXITED", () =>
      heartbeats.some((h) => h.replicas.some((r) => r.replicaId === "r3" && r.state === "REPLICA_STATE_EXITED")),
    );

    // An exited replica started again gets a new process.
    const r2b = track(await a2.startReplica({ replicaId: "r2", model: "sim-chat", engine: "sim" }));
    assert.notEqual(r2b.pid, r2.pid);
    assert.equal(r2b.state, "REPLICA_STATE_STARTING");
    r2 = r2b;
  });

  await t.test("Fetch: a local path streams one done message; a hub id is left to the engine", async () => {
    const file = path.join(dataDir, "weights.gguf");
    fs.writeFileSync(file, Buffer.alloc(1234, 7));
    const seen: number[] = [];
    const last = await a2.fetch({ source: file }, (p) => seen.push(p.bytes));
    assert.deepEqual(seen, [1234]);
    assert.equal(last.done, true);
    assert.equal(last.total, 1234);
    assert.equal(last.path, file);
    const hub = await a2.fetch({ source: "Qwen/Qwen2.5-0.5B-Instruct" });
    assert.equal(hub.done, true);
    assert.equal(hub.path, "Qwen/Qwen2.5-0.5B-Instruct");
    await assert.rejects(a2.fetch({ source: "../w.gguf" }), (e) => grpcCode(e) === grpc.status.INVALID_ARGUMENT);
    await assert.rejects(a2.fetch({ source: path.join(dataDir, "missing") }), (e) => grpcCode(e) === grpc.status.NOT_FOUND);
  });

  await t.test("StartReplica refuses engine flags with the reason", async () => {
    await assert.rejects(
      a2.startReplica({ replicaId: "bad-flags", model: "m", engine: "vllm", args: ["--trust_remote=1"] }),
      (e) => grpcCode(e) === grpc.status.INVALID_ARGUMENT && /--trust_remote=1 abbreviates --trust-remote-code, which runs code/.test((e as grpc.ServiceError).details),
    );
    await assert.rejects(
      a2.startReplica({ replicaId: "bad-flags", model: "m", engine: "comfyui", args: ["--listen", "0.0.0.0"] }),
      (e) => grpcCode(e) === grpc.status.INVALID_ARGUMENT && /beyond loopback/.test((e as grpc.ServiceError).details),
    );
  });

  await t.test("Logs: the tail of a replica's output, then what it writes next", async () => {
    const read = (follow: boolean) => a2.logs({ replicaId: "r2", tailBytes: 1 << 20, follow });
    let text = "";
    for await (const c of read(false)) text += (c as { data: Buffer }).data.toString();
    assert.match(text, /starting replica r2/);

    const stream = read(true);
    let got = "";
    const seen = new Promise<void>((resolve) =>
      stream.on("data", (c: { data: Buffer }) => {
        got += c.data.toString();
        if (got.includes("a new line")) resolve();
      }),
    );
    stream.on("error", () => undefined); // the cancel below
    fs.appendFileSync(path.join(nodeDir, "logs", "r2.log"), "a new line\n");
    await seen;
    stream.cancel();
    await assert.rejects(
      new Promise((resolve, reject) => a2.logs({ replicaId: "nope" }).on("error", reject).on("end", resolve)),
      (e) => grpcCode(e) === grpc.status.NOT_FOUND,
    );
  });

  await t.test("an agent started with stop-engines-on-exit stops them when it closes", async () => {
    await agents[1]!.close();
    await waitFor("r2 gone", () => !alive(r2.pid), 10_000);
  });
});

test("the cluster token file is made once with mode 0600 and read back", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-token-"));
  try {
    const t1 = clusterToken(dir);
    assert.ok(t1.length >= 16);
    assert.equal(fs.statSync(path.join(dir, "cluster-token")).mode & 0o777, 0o600);
    assert.equal(clusterToken(dir), t1);
    assert.equal(clusterToken(dir, "from-env"), "from-env");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

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
