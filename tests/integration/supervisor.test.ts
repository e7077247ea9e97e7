// `llmgw run` keeps the platform up when one of its processes dies. Under steady load through the
// gateway, each process is killed with SIGKILL (as an OOM or a botched upgrade would):
// - the agent: no request fails, the engines keep their pids, and the new agent adopts them;
// - the Temporal worker during a serve: no request fails, and the serve finishes;
// - the usage worker: no request fails, and every request lands in the ledger;
// - the gateway: only requests in flight fail, and it answers again.
// Then SIGTERM stops everything, the gateway first and the agent (which stops its engines) last.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { LLMGW_BIN, waitFor } from "../../common/children.ts";
import { freePort, startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const CONCURRENCY = 6;

/** Steady load: CONCURRENCY loops of short chat completions until stopped; counts what came back. */
function load(url: string, key: string, model: string) {
  const counts = { ok: 0, failed: 0, cutOff: 0, lastOkAt: 0 };
  let running = true;
  const loop = async () => {
    while (running) {
      try {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
        });
        await res.arrayBuffer();
        if (res.status === 200) {
          counts.ok++;
          counts.lastOkAt = Date.now();
        } else throw new Error(String(res.status));
      } catch (err) {
        counts.failed++;
        // Refused: the request never reached a gateway (none listened); anything else was cut off in flight.
        if ((err as { cause?: { code?: string } }).cause?.code !== "ECONNREFUSED") counts.cutOff++;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const loops = Array.from({ length: CONCURRENCY }, loop);
  return { counts, stop: async () => ((running = false), await Promise.all(loops)) };
}

/** The pid of run's child running `llmgw <args…>` (its parent is run), or null. */
function childPid(runPid: number, args: string): number | null {
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(fs.readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").join(" ");
      if (ppid === runPid && cmd.includes(`${LLMGW_BIN} ${args}`)) return Number(d);
    } catch {
      /* gone */
    }
  }
  return null;
}

describe("llmgw run restarts a process that dies", () => {
  let p: Platform;
  let run: ChildProcess;
  let runExited: Promise<number | null>;
  let metricsPort: number;
  let db: pg.Client;
  const model = uniqueModel("sup");
  const keys: string[] = [];
  const key = async () => {
    const made = JSON.parse((await p.ctl(["keys", "create", "--project", "sup", "--json"])).stdout) as { id: string; key: string };
    keys.push(made.id);
    return made;
  };
  /** Kills `args`'s process, waits for its successor, and returns both pids. */
  const killAndWait = async (args: string) => {
    const before = childPid(run.pid!, args);
    assert.ok(before, `run has a child running ${args}`);
    process.kill(before, "SIGKILL");
    const after = await waitFor(`${args} started again`, async () => {
      const now = childPid(run.pid!, args);
      return now !== null && now !== before ? now : null;
    }, 30_000, 50);
    return { before, after };
  };
  const restarts = async (proc: string) => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return Number(new RegExp(`^llmgw_process_restarts_total\\{process="${proc}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
  };

  before(async () => {
    p = await startPlatform({ processes: [] });
    metricsPort = await freePort();
    run = spawn(process.execPath, [LLMGW_BIN, "run"], { env: { ...p.env, LLMGW_RUN_METRICS_PORT: String(metricsPort) }, stdio: ["ignore", fs.openSync(path.join(p.dataDir, "run.log"), "a"), "inherit"] });
    runExited = new Promise((resolve) => run.once("exit", (code) => resolve(code)));
    await waitFor("the gateway", async () => (await fetch(`${p.adminUrl}/health`)).ok, 60_000);
    await waitFor("the agent to register", async () => (await p.admin<{ data: unknown[] }>("GET", "/nodes")).data.length > 0, 60_000);
    assert.equal((await p.ctl(["projects", "create", "sup"])).code, 0);
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait"]);
    assert.equal(served.code, 0, served.stderr);
    db = new pg.Client({ connectionString: p.env.DATABASE_URL });
    await db.connect();
  });

  after(async () => {
    await db?.end();
    if (run && run.exitCode === null) {
      run.kill("SIGKILL");
      await runExited;
    }
    await p?.stop();
  });

  it("agent, Temporal worker, usage worker: killed under load, no request fails, nothing is lost", async () => {
    const k = await key();
    const l = load(p.clientUrl, k.key, model);
    try {
      await waitFor("load flowing", async () => l.counts.ok > 20, 30_000, 50);

      const engines = p.enginePids(model);
      assert.equal(engines.length, 1);
      await killAndWait("agent");
      const restartedAt = Date.now();
      await waitFor("the new agent heard from", async () => {
        const n = (await p.admin<{ data: { lastSeen: string }[] }>("GET", "/nodes")).data[0];
        return n && Date.parse(n.lastSeen) > restartedAt;
      }, 30_000, 100);
      assert.deepEqual(p.enginePids(model), engines, "the engine never stopped");
      const shown = await p.admin<{ replicas: { state: string }[] }>("GET", `/models/${model}`);
      assert.deepEqual(shown.replicas.map((r) => r.state), ["ready"], "the adopted replica serves on");

      const other = uniqueModel("sup-serve");
      const { operationId } = await p.admin<{ operationId: string }>("POST", `/models/${other}/serve`, { engine: "sim", replicas: 2, args: ["--load-delay-ms", "1500"] });
      await waitFor("the serve underway", async () => (await p.admin<{ status: string }>("GET", `/operations/${operationId}`)).status === "RUNNING", 30_000, 100);
      await killAndWait("worker temporal");
      const op = await waitFor("the serve to end", async () => {
        const o = await p.admin<{ status: string; error?: string }>("GET", `/operations/${operationId}`);
        return o.status === "RUNNING" ? null : o;
      }, 180_000, 250);
      assert.equal(op.status, "COMPLETED", op.error);

      await killAndWait("worker usage");
      const before = l.counts.ok;
      await waitFor("more load after the usage worker's restart", async () => l.counts.ok > before + 20, 30_000, 50);
    } finally {
      await l.stop();
    }
    assert.equal(l.counts.failed, 0, "no request failed");
    assert.ok((await restarts("agent")) >= 1 && (await restarts("worker-temporal")) >= 1 && (await restarts("worker-usage")) >= 1, "each restart is counted");
    const ledger = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM usage_events WHERE key_id = $1", [k.id])).rows[0]!.n);
    await waitFor(`all ${l.counts.ok} requests in the ledger`, async () => (await ledger()) >= l.counts.ok, 120_000, 250).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${await ledger()} there`);
    });
    assert.equal(await ledger(), l.counts.ok, "every request counted once");
  });

  it("the gateway: only the requests in flight fail, and it answers again", async () => {
    const k = await key();
    const l = load(p.clientUrl, k.key, model);
    let killedAt = 0;
    try {
      await waitFor("load flowing", async () => l.counts.ok > 20, 30_000, 50);
      const failedBefore = l.counts.failed;
      killedAt = Date.now();
      await killAndWait("gateway");
      await waitFor("the gateway answering again", async () => l.counts.lastOkAt > killedAt, 60_000, 50);
      // Its client port answers before the rest is up (Control gRPC last): wait for all of it.
      const log = path.join(p.dataDir, "logs", "gateway.log");
      await waitFor("the new gateway fully up", async () => fs.readFileSync(log, "utf8").split("gateway listening").length === 3, 60_000, 100);
      assert.equal(failedBefore, 0);
    } finally {
      await l.stop();
    }
    const back = (l.counts.lastOkAt - killedAt) / 1000;
    process.stdout.write(`# the gateway answered again ${back.toFixed(1)} s after its SIGKILL; ${l.counts.failed} requests failed meanwhile\n`);
    // Each loop has one request in flight (and one kept-alive connection): those are cut off. A request
    // sent while no gateway listens is refused before it reaches one, and the loop sends it again.
    assert.ok(l.counts.cutOff <= CONCURRENCY, `at most the ${CONCURRENCY} in flight were cut off (${l.counts.cutOff} of ${l.counts.failed} failed)`);
  });

  it("a process that keeps dying is started again within the limit, and raises process_crashing", async () => {
    // An interface this machine does not have: the worker cannot bind its metrics and exits at once,
    // every time (run only logs that it cannot serve its own).
    const bad = spawn(process.execPath, [LLMGW_BIN, "run", "--only", "worker-usage"], {
      env: { ...p.env, LLMGW_HOST: "203.0.113.1", LLMGW_RUN_METRICS_PORT: "0", LLMGW_DATA_DIR: path.join(p.dataDir, "bad") },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let said = "";
    bad.stderr!.on("data", (d: Buffer) => (said += d.toString()));
    try {
      const n = await waitFor("the process_crashing notification", async () => {
        const { data } = await p.admin<{ data: { kind: string; subject: string; summary: string }[] }>("GET", "/notifications?limit=500");
        return data.find((x) => x.kind === "process_crashing" && x.subject === "worker-usage");
      }, 90_000, 500);
      assert.match(n.summary, /worker-usage died 5 times within a minute \(last: exit code 1\)/);
    } finally {
      if (bad.exitCode === null && bad.signalCode === null) {
        bad.kill("SIGTERM");
        await new Promise((r) => bad.once("exit", r));
      }
    }
    const restarts = said.split("\n").filter((x) => x.includes("starting it again"));
    assert.ok(restarts.length >= 5, said.slice(-2000));
    // Backoff doubles from 250 ms; past the fifth restart in a minute the next waits for the window.
    const waits = restarts.map((x) => (JSON.parse(x) as { inMs: number }).inMs);
    assert.deepEqual(waits.slice(0, 5), [250, 500, 1000, 2000, 4000]);
    if (waits[5] !== undefined) assert.ok(waits[5] > 30_000, `the sixth waits for the minute: ${waits[5]} ms`);
  });

  it("SIGTERM stops every process, the gateway first and the agent last, with its engines", async () => {
    const engines = p.enginePids(model);
    run.kill("SIGTERM");
    assert.equal(await runExited, 0);
    const stoppedAt = (name: string) => {
      const lines = fs.readFileSync(path.join(p.dataDir, "logs", `${name}.log`), "utf8").split("\n").filter((x) => x.startsWith("{") && x.includes(' stopping"'));
      assert.ok(lines.length > 0, `${name} logged its stop: ${fs.readFileSync(path.join(p.dataDir, "logs", `${name}.log`), "utf8").slice(-1500)}`);
      return Date.parse((JSON.parse(lines.at(-1)!) as { t: string }).t);
    };
    assert.ok(stoppedAt("gateway") <= stoppedAt("worker-temporal") && stoppedAt("worker-temporal") <= stoppedAt("agent"), "gateway, then workers, then agent");
    assert.ok(engines.length > 0);
    assert.deepEqual(p.enginePids(model), [], "the engines stopped with the agent");
    assert.equal(childPid(run.pid!, "gateway"), null);
  });
});
