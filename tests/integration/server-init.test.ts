// `llmgw server init` and `llmgw node join` end to end, each under a root of its own (--prefix), on
// the real PostgreSQL, Redis and Temporal: the install refuses bad flags and a failing check before
// writing anything; then installs, its units run (by a stand-in systemctl that runs them as systemd
// would: a clean environment and the unit's EnvironmentFile), and the platform comes up from what it
// wrote alone; a second machine joins with the cluster token (a wrong token is refused), serves
// sim-chat, and is removed again with `ctl node remove`, drained first.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { LLMGW_BIN, waitFor } from "../../common/children.ts";
import { systemdStandIn, type StandIn } from "../helpers/systemd-standin.ts";

const id = randomBytes(4).toString("hex");
const root = fs.mkdtempSync(path.join(os.tmpdir(), `llmgw-init-${id}-`));
const server = path.join(root, "server");
const node = path.join(root, "node");
const database = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
database.pathname = `/llmgw_init_${id}`;
const NODE_B = `joined-${id}`;
// Engine ports: the server's agent the lower half, the joined node's the upper.
const engines = 20000 + Math.floor(Math.random() * 400) * 100;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** llmgw with only PATH and HOME, plus `env`: nothing leaks in from the test's own settings. */
function llmgw(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LLMGW_BIN, ...args], { env: { PATH: process.env.PATH!, HOME: os.homedir(), ...env }, encoding: "utf8", timeout: 300_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ctl = (...args: string[]) => llmgw(["ctl", ...args], { LLMGW_SETTINGS_FILE: path.join(server, "etc/llmgw/llmgw.env") });
const json = <T>(r: Ran): T => {
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout) as T;
};
const mode = (f: string) => fs.statSync(f).mode & 0o777;
const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer().once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });

let ports: Record<"client" | "admin" | "control" | "agent" | "agentB" | "temporal", number>;
let serverUnits: StandIn;
let nodeUnits: StandIn;
let initArgs: string[];

/**
 * A free port in 10000–17999: below the engines' ports here (20000 up) and the kernel's ephemeral
 * range (32768 up), so no process's outgoing connection takes it between this check and the
 * installed unit's listen (a port the kernel handed out as free was taken so in a two-lane run).
 */
async function quietPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 10000 + Math.floor(Math.random() * 8000);
    if (taken.has(port) || !(await isFree(port))) continue;
    taken.add(port);
    return port;
  }
}

before(async () => {
  const taken = new Set<number>();
  const [client, admin, control, agent, agentB] = [await quietPort(taken), await quietPort(taken), await quietPort(taken), await quietPort(taken), await quietPort(taken)];
  // The single-machine Temporal's frontend, and its Web UI 1000 above: both free.
  let temporal = await quietPort(taken);
  while (!(await isFree(temporal + 1000)) || taken.has(temporal + 1000)) temporal = await quietPort(taken);
  taken.add(temporal + 1000);
  ports = { client, admin, control, agent, agentB, temporal };
  serverUnits = systemdStandIn(path.join(root, "server-systemd"), path.join(server, "etc/systemd/system"));
  nodeUnits = systemdStandIn(path.join(root, "node-systemd"), path.join(node, "etc/systemd/system"));
  initArgs = [
    "server", "init", "--yes", "--prefix", server,
    "--temporal", "dev", "--temporal-port", String(temporal),
    "--host", "127.0.0.1", "--advertise", "127.0.0.1", "--node-id", `server-${id}`,
    "--client-port", String(client), "--admin-port", String(admin), "--control-port", String(control), "--agent-port", String(agent),
    ...[
      `LLMGW_TASK_QUEUE=llmgw-init-${id}`, "LLMGW_HEARTBEAT_MS=1000",
      "LLMGW_METRICS_PORT=0", "LLMGW_WORKER_METRICS_PORT=0", "LLMGW_AGENT_METRICS_PORT=0", "LLMGW_RUN_METRICS_PORT=0",
      `LLMGW_ENGINE_PORT_MIN=${engines}`, `LLMGW_ENGINE_PORT_MAX=${engines + 49}`, "LLMGW_AGENT_STOP_ENGINES_ON_EXIT=1",
    ].flatMap((kv) => ["--set", kv]),
  ];
});

after(async () => {
  for (const [units, names] of [[nodeUnits, ["llmgw-agent"]], [serverUnits, ["llmgw-gateway", "llmgw-worker", "llmgw-agent", "llmgw-temporal"]]] as const) {
    for (const n of names) spawnSync(units.path, ["stop", `${n}.service`]);
  }
  fs.rmSync(root, { recursive: true, force: true });
  // The database init made, on the shared server.
  const maintenance = new URL(database.href);
  maintenance.pathname = "/postgres";
  const c = new pg.Client({ connectionString: maintenance.href });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${database.pathname.slice(1)}" WITH (FORCE)`).finally(() => c.end());
});

// The URLs go in by the environment, as an operator keeps a password off the command line.
const services = () => ({ DATABASE_URL: database.toString(), REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6380/10" });

describe("llmgw server init", () => {
  it("refuses bad flags, naming them, and installs nothing", async () => {
    const cases: [string[], RegExp][] = [
      [["--temporal", "external"], /--temporal-address: --temporal external needs --temporal-address HOST:PORT/],
      [["--client-port", "eighty"], /--client-port: /],
      [["--agent", "maybe"], /--agent: /],
      [["--bogus"], /Unknown option '--bogus'/],
    ];
    for (const [extra, why] of cases) {
      const r = await llmgw(["server", "init", "--yes", "--prefix", server, ...extra], services());
      assert.equal(r.code, 2, `${extra.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, why);
    }
    const r = await llmgw(["server", "init", "--prefix", server], services());
    assert.equal(r.code, 2, "not at a terminal, without --yes");
    assert.match(r.stderr, /not at a terminal: give the choices as flags with --yes/);
    assert.equal(fs.existsSync(server), false, "nothing written");
  });

  it("refuses when a check fails (a port taken), before installing anything", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(ports.client, "127.0.0.1", resolve));
    try {
      const r = await llmgw([...initArgs, "--systemctl", serverUnits.path], services());
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, new RegExp(`FAIL  ports +cannot listen on 127\\.0\\.0\\.1: ${ports.client} \\(LLMGW_CLIENT_PORT\\): EADDRINUSE`));
      assert.match(r.stdout, /ok +postgres .*the database "llmgw_init_[0-9a-f]+" will be created/);
      assert.match(r.stderr, /refused: a check failed \(FAIL above\); nothing was installed/);
      assert.equal(fs.existsSync(server), false, "nothing written");
      assert.deepEqual(serverUnits.calls(), [], "systemctl not called");
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("installs: settings, secrets 0600, store, units started; the platform comes up from them alone", async () => {
    const r = await llmgw([...initArgs, "--systemctl", serverUnits.path], services());
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\n${serverUnits.log("llmgw-gateway")}`);
    for (const step of ["[1/5] checking this machine", "[2/5] writing the settings", "[3/5] setting up the store", "[4/5] installing the units", "[5/5] done"]) assert.ok(r.stdout.includes(step), step);
    assert.match(r.stdout, /migration\(s\) applied/);
    assert.match(r.stdout, new RegExp(`llmgw node join 127\\.0\\.0\\.1:${ports.control} --token-file \\./cluster-token`));

    const settingsFile = path.join(server, "etc/llmgw/llmgw.env");
    const settings = fs.readFileSync(settingsFile, "utf8");
    assert.equal(mode(settingsFile), 0o640);
    assert.equal(mode(path.join(server, "etc/llmgw/secrets")), 0o700);
    for (const s of ["cluster-token", "admin-token", "database-url", "redis-url", "notify-secret"]) {
      const f = path.join(server, "etc/llmgw/secrets", s);
      assert.equal(mode(f), 0o600, s);
      assert.ok(!settings.includes(fs.readFileSync(f, "utf8").trim()), `${s}'s value is not in the settings file`);
    }
    assert.match(settings, /^LLMGW_ADMIN_TOKEN_FILE=.*secrets\/admin-token$/m);
    // Temporal first (and answering) then the agent, the worker, the gateway last.
    assert.deepEqual(fs.readdirSync(path.join(server, "etc/systemd/system")).sort(), ["llmgw-agent.service", "llmgw-gateway.service", "llmgw-temporal.service", "llmgw-worker.service"]);
    assert.deepEqual(serverUnits.calls(), ["daemon-reload", "enable --now llmgw-temporal.service", "enable --now llmgw-agent.service", "enable --now llmgw-worker.service", "enable --now llmgw-gateway.service"]);
    assert.match(r.stdout, new RegExp(`Temporal [0-9.]+ at 127\\.0\\.0\\.1:${ports.temporal} \\(plaintext\\), namespace "default"`));
    assert.ok(fs.existsSync(path.join(server, "var/lib/llmgw/temporal/temporal.db")), "Temporal's file database in the data directory");

    // ctl finds the admin API and its token through the settings file alone.
    await waitFor("the server's agent to register", async () => json<{ id: string }[]>(await ctl("nodes", "--json")).some((n) => n.id === `server-${id}`), 60_000);
  });

  it("runs again keeping its tokens", async () => {
    const token = fs.readFileSync(path.join(server, "etc/llmgw/secrets/cluster-token"), "utf8");
    // Its own processes hold the ports now: the check says so, and nothing is changed.
    const r = await llmgw([...initArgs, "--systemctl", serverUnits.path], services());
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAIL {2}ports/);
    assert.equal(fs.readFileSync(path.join(server, "etc/llmgw/secrets/cluster-token"), "utf8"), token);
  });
});

describe("llmgw node join, ctl node remove", () => {
  const joinArgs = () => [
    "node", "join", `127.0.0.1:${ports.control}`, "--prefix", node, "--systemctl", nodeUnits.path,
    "--node-id", NODE_B, "--host", "127.0.0.1", "--advertise", "127.0.0.1", "--agent-port", String(ports.agentB),
    "--set", "LLMGW_AGENT_METRICS_PORT=0", "--set", "LLMGW_HEARTBEAT_MS=1000", "--set", "LLMGW_AGENT_STOP_ENGINES_ON_EXIT=1",
    "--set", `LLMGW_ENGINE_PORT_MIN=${engines + 50}`, "--set", `LLMGW_ENGINE_PORT_MAX=${engines + 99}`,
  ];

  it("refuses a token that is not the cluster's, and a missing one, installing nothing", async () => {
    const wrong = path.join(root, "wrong-token");
    fs.writeFileSync(wrong, "not-the-cluster-token\n", { mode: 0o600 });
    const r = await llmgw([...joinArgs(), "--token-file", wrong]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /\[2\/4\] enrolling with the control plane/);
    assert.match(r.stderr, /refused: the control plane did not enrol this node: the control plane's CA does not check with this node's cluster token/);
    assert.equal(fs.existsSync(path.join(node, "etc")), false, "no settings written");
    const none = await llmgw(joinArgs());
    assert.equal(none.code, 2);
    assert.match(none.stderr, /give the cluster token with --token-file FILE/);
  });

  it("joins with the cluster token: certificate, agent unit, registered, listed", async () => {
    const token = path.join(root, "cluster-token");
    fs.copyFileSync(path.join(server, "etc/llmgw/secrets/cluster-token"), token);
    const r = await llmgw([...joinArgs(), "--token-file", token]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\n${nodeUnits.log("llmgw-agent")}`);
    for (const step of ["[1/4] checking this machine", "[2/4] enrolling", "[3/4] installing the agent", "[4/4] registering"]) assert.ok(r.stdout.includes(step), step);
    assert.match(r.stdout, new RegExp(`node ${NODE_B} registered`));
    assert.equal(mode(path.join(node, "var/lib/llmgw/agent", NODE_B, "tls/key.pem")), 0o600);
    assert.equal(mode(path.join(node, "etc/llmgw/secrets/cluster-token")), 0o600);
    assert.deepEqual(nodeUnits.calls(), ["daemon-reload", "enable --now llmgw-agent.service"]);
    const nodes = json<{ id: string; address: string }[]>(await ctl("nodes", "--json"));
    assert.equal(nodes.find((n) => n.id === NODE_B)?.address, `127.0.0.1:${ports.agentB}`);
  });

  it("serves sim-chat on the joined node", async () => {
    // The server's own node cordoned: the replica can only go to the joined one.
    json(await ctl("node", "cordon", `server-${id}`, "--json"));
    json(await ctl("model", "serve", "sim-chat", "--engine", "sim", "--replicas", "1", "--wait", "--json"));
    json(await ctl("node", "uncordon", `server-${id}`, "--json"));
    const onB = json<{ id: string; replicas: number }[]>(await ctl("nodes", "--json")).find((n) => n.id === NODE_B);
    assert.equal(onB?.replicas, 1);
    json(await ctl("projects", "create", `p-${id}`, "--json"));
    const { key } = json<{ key: string }>(await ctl("keys", "create", "--project", `p-${id}`, "--json"));
    const res = await fetch(`http://127.0.0.1:${ports.client}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "hello" }], max_tokens: 8 }),
    });
    const body = (await res.json()) as { choices?: { message: { content: string } }[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.ok(body.choices?.[0]?.message.content, "an answer");
  });

  it("ctl node remove drains first, refuses while the agent runs, then removes it once stopped", async () => {
    const admin = (method: string, p: string) =>
      fetch(`http://127.0.0.1:${ports.admin}/api/v1${p}`, { method, headers: { authorization: `Bearer ${fs.readFileSync(path.join(server, "etc/llmgw/secrets/admin-token"), "utf8").trim()}` } });
    const direct = await admin("DELETE", `/nodes/${NODE_B}`);
    assert.equal(direct.status, 409);
    assert.match(((await direct.json()) as { error: { message: string } }).error.message, /still has 1 replica\(s\): drain it first/);

    const first = await ctl("node", "remove", NODE_B);
    assert.equal(first.code, 1, first.stdout + first.stderr);
    assert.match(first.stderr, new RegExp(`draining ${NODE_B}: 1 replica\\(s\\) to move`));
    assert.match(first.stderr, new RegExp(`the agent of node '${NODE_B}' is still running .*stop it first`));
    const drained = json<{ id: string; replicas: number; cordoned: boolean }[]>(await ctl("nodes", "--json"));
    const b = drained.find((n) => n.id === NODE_B);
    assert.deepEqual([b?.replicas, b?.cordoned], [0, true], "drained and cordoned, still there");
    assert.equal(drained.find((n) => n.id === `server-${id}`)?.replicas, 1, "the replica moved to the server's node");

    assert.equal(spawnSync(nodeUnits.path, ["stop", "llmgw-agent.service"]).status, 0);
    // Until the control plane counts the agent as stopped (three heartbeats unheard).
    await waitFor("the agent to be unheard", async () => {
      const n = json<{ id: string; lastSeen: string }[]>(await ctl("nodes", "--json")).find((x) => x.id === NODE_B)!;
      return Date.now() - Date.parse(n.lastSeen) > 3500;
    }, 30_000);
    const removed = json<{ id: string; removed: boolean; moved: number }>(await ctl("node", "remove", NODE_B, "--json"));
    assert.deepEqual(removed, { id: NODE_B, removed: true, replicas: 0, moved: 0 });
    assert.ok(!json<{ id: string }[]>(await ctl("nodes", "--json")).some((n) => n.id === NODE_B));
    assert.equal((await admin("DELETE", `/nodes/${NODE_B}`)).status, 404);
  });
});
