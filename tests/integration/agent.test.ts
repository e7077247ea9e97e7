// The node agent end to end, in-process: a fake Control service (enrolling agents with a CA of the
// test's own, tests/helpers/tls.ts) records Register and Heartbeat; real `sim` engine processes
// are started, made idempotently, adopted by a second agent after the first one closes, stopped,
// and killed from outside. Calls to the agent go over mutual TLS as the control plane's do (who
// else is refused: tests/integration/agent-tls.test.ts). Replicas on GPUs, as the engine user, and
// drained: agent-replicas.test.ts; what both share: tests/helpers/agent-harness.ts.
import { freePort } from "../helpers/platform.ts";
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { agentProto, hasClusterToken, type ControlHandlers, type NodeInfo__Output, type ReplicaStatus__Output } from "../../common/proto.ts";
import type { HeartbeatRequest__Output } from "../../common/generated/proto/llmgw/agent/v1/HeartbeatRequest.ts";
import { startAgent, clusterToken } from "../../agent/server.ts";
import { agentClient, type AgentApi } from "../../agent/client.ts";
import { enrolmentHandlers, refuseUnlessNode } from "../../gateway/control-grpc/enrolment.ts";
import { dial, serverCredentials } from "../../common/tls/credentials.ts";
import { TOKEN, NODE, dataDir, nodeDir, portBase, ca, controlTls, NO_GPUS, agents, clients, alive, simProcessesOn, killGroup, waitFor, health, grpcCode, track } from "../helpers/agent-harness.ts";

let control: grpc.Server | undefined;
after(() => control?.forceShutdown());

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
