// A whole llmgw for one test file: its own database, data directory, ports, Temporal task queue
// and node id, on the real services `npm test` started. Processes are real children, so a test
// can kill one and start another.
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { ensureDatabase, migrate } from "../../common/migrate.ts";
import { adminClientFor, type AdminClient } from "../../ctl/admin-client.ts";
import { startChild, stopChild, tail, waitFor, LLMGW_BIN, type Child } from "../../common/children.ts";
import "./keep-alive.ts";
import { keyMaker, server, type NewKey, type ServeOptions } from "./platform-setup.ts";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export interface Platform {
  id: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  clientUrl: string;
  adminUrl: string;
  adminToken: string;
  children: Map<string, Child>;
  start(name: ProcessName): Promise<Child>;
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Runs `llmgw ctl` with the platform's environment; never blocks this process. */
  ctl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  admin: AdminClient["request"];
  /** A new API key of `project` (default "test"), created first if this platform has not made it; `args` go to `ctl keys create`. */
  newKey(opts?: { project?: string; args?: string[] }): Promise<NewKey>;
  /** `ctl model serve … --wait`: the model served with `replicas` (default 1) of `engine` (default sim), or an error. */
  serve(model: string, opts?: ServeOptions): Promise<void>;
  /** Engine processes of this platform's agent, found by their replica records' pids. */
  enginePids(model: string, nodeId?: string): number[];
  /** A second node: another agent with its own id, port, data directory and engine ports. */
  addAgent(nodeId: string): Promise<Child>;
  /** The last lines of every process's log, to put in a failure's message. */
  logTails(): string;
  stop(): Promise<void>;
}

export type ProcessName = "gateway" | "worker-temporal" | "worker-usage" | "agent";

const ARGS: Record<ProcessName, string[]> = {
  gateway: ["gateway"],
  "worker-temporal": ["worker", "temporal"],
  "worker-usage": ["worker", "usage"],
  agent: ["agent"],
};

const ALL: ProcessName[] = ["gateway", "worker-temporal", "worker-usage", "agent"];

/** The sim engine's script on a command line: compiled (dist/) or the source run through tsx. */
const SIM_SCRIPT = /\/agent\/engines\/sim\/main\.[jt]s$/;

/**
 * nodeId: the agent's LLMGW_NODE_ID (default node-<id>); Slurm tests use the host's name, Slurm's node name.
 * databaseUrl: an existing database to use (migrated here, never dropped) instead of a fresh one on the shared server.
 */
export async function startPlatform(opts: { processes?: ProcessName[]; nodeId?: string; env?: NodeJS.ProcessEnv; databaseUrl?: string } = {}): Promise<Platform> {
  const id = randomBytes(4).toString("hex");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `llmgw-t-${id}-`));
  const base = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
  base.pathname = `/llmgw_t_${id}`;
  const databaseUrl = opts.databaseUrl ?? base.toString();
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl);

  const [client, admin, metrics, control, agent] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const engineBase = 20000 + Math.floor(Math.random() * 400) * 100;
  const adminToken = randomBytes(16).toString("hex");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LLMGW_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LLMGW_TASK_QUEUE: `llmgw-test-${id}`,
    LLMGW_TEMPORAL_NAMESPACE: process.env.LLMGW_TEMPORAL_NAMESPACE ?? "llmgw-test",
    LLMGW_CLIENT_PORT: String(client),
    LLMGW_ADMIN_PORT: String(admin),
    LLMGW_METRICS_PORT: String(metrics),
    // Two workers and an agent per platform, several platforms at once: any free port each.
    LLMGW_WORKER_METRICS_PORT: "0",
    LLMGW_AGENT_METRICS_PORT: "0",
    LLMGW_CONTROL_PORT: String(control),
    LLMGW_CONTROL_ADDRESS: `127.0.0.1:${control}`,
    LLMGW_AGENT_PORT: String(agent),
    LLMGW_NODE_ID: opts.nodeId ?? `node-${id}`,
    LLMGW_ENGINE_PORT_MIN: String(engineBase),
    // The first agent's engines take the lower half of the range, a second agent's the upper.
    LLMGW_ENGINE_PORT_MAX: String(engineBase + 49),
    LLMGW_CLUSTER_TOKEN: randomBytes(16).toString("hex"),
    LLMGW_ADMIN_TOKEN: adminToken,
    LLMGW_ADMIN_URL: `http://127.0.0.1:${admin}`,
    LLMGW_HEARTBEAT_MS: "1000",
    ...opts.env,
    LLMGW_AGENT_STOP_ENGINES_ON_EXIT: "1",
  };
  const logDir = path.join(dataDir, "logs");
  const children = new Map<string, Child>();
  const adminUrl = `http://127.0.0.1:${admin}`;

  const p: Platform = {
    id,
    dataDir,
    env,
    clientUrl: `http://127.0.0.1:${client}`,
    adminUrl,
    adminToken,
    children,
    async start(name) {
      const child = startChild(name, ARGS[name], { env, logDir });
      children.set(name, child);
      if (name === "gateway") await waitFor("the gateway", async () => (await fetch(`${adminUrl}/health`)).ok, 60_000);
      return child;
    },
    async kill(name, signal = "SIGKILL") {
      const child = children.get(name);
      if (!child) return;
      child.proc.kill(signal);
      await child.exited;
      children.delete(name);
    },
    // Never execFileSync: a test blocked in a child for long enough misses its pooled connections'
    // closes, and its next request fails (tests/helpers/keep-alive.ts).
    ctl(args) {
      return new Promise((resolve) => {
        const child = execFile(process.execPath, [LLMGW_BIN, "ctl", ...args], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
          // err.code is the exit status, or a string such as ENOENT when ctl never ran.
          resolve({ code: !err ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr }),
        );
        child.stdin?.end(); // nothing to read, as a ctl run by hand with </dev/null
      });
    },
    admin: adminClientFor(adminUrl, adminToken).request,
    newKey: keyMaker((args) => p.ctl(args)),
    serve: server((args) => p.ctl(args)),
    async addAgent(nodeId) {
      const agentEnv = {
        ...env,
        LLMGW_NODE_ID: nodeId,
        LLMGW_AGENT_PORT: String(await freePort()),
        LLMGW_DATA_DIR: path.join(dataDir, nodeId),
        LLMGW_ENGINE_PORT_MIN: String(engineBase + 50),
        LLMGW_ENGINE_PORT_MAX: String(engineBase + 99),
      };
      const child = startChild(`agent-${nodeId}`, ["agent"], { env: agentEnv, logDir });
      children.set(`agent-${nodeId}`, child);
      await waitFor(`agent ${nodeId} to register`, async () => (await p.admin<{ data: { id: string }[] }>("GET", "/nodes")).data.some((n) => n.id === nodeId), 60_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n${p.logTails()}`);
        },
      );
      return child;
    },
    logTails() {
      return [...children.values()].map((c) => `--- ${c.name}\n${tail(c.logFile)}`).join("\n");
    },
    enginePids(model, nodeId) {
      const [lo, hi] = nodeId === undefined ? [engineBase, engineBase + 99] : nodeId === env.LLMGW_NODE_ID ? [engineBase, engineBase + 49] : [engineBase + 50, engineBase + 99];
      const pids: number[] = [];
      for (const dir of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(dir)) continue;
        let cmd: string;
        try {
          cmd = fs.readFileSync(`/proc/${dir}/cmdline`, "utf8");
        } catch {
          continue;
        }
        const args = cmd.split("\0");
        const m = args.indexOf("--model");
        const portAt = args.indexOf("--port");
        const port = Number(args[portAt + 1]);
        if (args.some((a) => SIM_SCRIPT.test(a)) && args[m + 1] === model && port >= lo && port <= hi) pids.push(Number(dir));
      }
      return pids;
    },
    async stop() {
      // The agents last, so they can stop their engines.
      for (const name of ALL) {
        const child = children.get(name);
        if (child) await stopChild(child, 10_000);
      }
      for (const child of children.values()) await stopChild(child, 10_000);
      children.clear();
      if (!opts.databaseUrl) await dropDatabase(databaseUrl);
    },
  };

  try {
    const names = opts.processes ?? ALL;
    for (const name of names) await p.start(name);
    if (names.includes("agent")) {
      await waitFor("the agent to register", async () => (await p.admin<{ data: unknown[] }>("GET", "/nodes")).data.length > 0, 60_000);
    }
  } catch (err) {
    const logs = p.logTails();
    await p.stop();
    throw new Error(`${(err as Error).message}\n${logs}`);
  }
  return p;
}

async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = "/postgres";
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

/** A model name no earlier run used: Temporal keeps model/<name> workflows across runs. */
export function uniqueModel(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString("hex")}`;
}
