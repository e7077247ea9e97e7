// `llmgw server init`: installs llmgw's control plane on this machine, each step said as it goes.
//   1. checks the machine (the doctor's checks, ports, memory) and refuses before installing anything;
//   2. writes the settings file and its secrets (settings-file.ts);
//   3. makes and migrates the store (store.ts);
//   4. installs and starts the units, Temporal first (systemd.ts), and waits for the gateway;
//   5. prints the command that adds another machine (llmgw node join).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setLogProcess } from "../../common/logging.ts";
import { clock } from "../../doctor/clock.ts";
import { fail, ok, type Check } from "../../doctor/finding.ts";
import type { UnitName } from "../units.ts";
import { ask, choicesFromFlags, choicesSchema, USAGE, type Choices } from "./choices.ts";
import { layoutFor, type Layout } from "./layout.ts";
import { formatFindings, memoryCheck, portsCheck, preflight, type ProcessKind } from "./preflight.ts";
import { checkSettings, keptSecret, newToken, secretPath, writeSettings, type SecretName } from "./settings-file.ts";
import { setUpStore, storeCheck } from "./store.ts";
import { startUnits, writeUnits } from "./systemd.ts";
import { ensureUser, untilAnswers } from "./host.ts";
import { temporal as temporalCheck } from "../../doctor/temporal.ts";
import { binsIn, configDir, registerNamespace, setUpTemporalDatabases, temporalServerCheck, writeTemporalServerConfig } from "./temporal-server.ts";
import type { TemporalUnit } from "./systemd.ts";


const say = (s: string) => void process.stdout.write(s + "\n");

/** The settings file's values (no secret among them) for these choices. */
export function settingsFor(c: Choices, layout: Layout): Record<string, string> {
  const s: Record<string, string> = {
    LLMGW_DATA_DIR: layout.dataDir,
    TEMPORAL_ADDRESS: c.temporal !== "external" ? `127.0.0.1:${c.temporalPort}` : c.temporalAddress!,
    LLMGW_HOST: c.host,
    LLMGW_CLIENT_PORT: String(c.clientPort),
    LLMGW_ADMIN_PORT: String(c.adminPort),
    LLMGW_ADMIN_URL: `http://127.0.0.1:${c.adminPort}`,
    LLMGW_CONTROL_PORT: String(c.controlPort),
    LLMGW_CONTROL_ADDRESS: `${c.advertise}:${c.controlPort}`,
  };
  // The Web UI links in admin answers and ctl output (the local UI listens on loopback only).
  if (c.temporal !== "external") s.LLMGW_TEMPORAL_UI_URL = `http://127.0.0.1:${c.temporalPort + 1000}`;
  if (c.agent === "yes") Object.assign(s, { LLMGW_NODE_ID: c.nodeId, LLMGW_AGENT_PORT: String(c.agentPort), LLMGW_AGENT_ADDRESS: `${c.advertise}:${c.agentPort}` });
  for (const kv of c.set) s[kv.slice(0, kv.indexOf("="))] = kv.slice(kv.indexOf("=") + 1);
  return s;
}

function temporalCliCheck(cli: string): Check {
  return {
    name: "temporal",
    roles: ["control"],
    async run() {
      const r = spawnSync(cli, ["--version"], { encoding: "utf8", timeout: 10_000 });
      if (r.error || r.status !== 0) return fail(`the Temporal CLI ${cli} does not run (${r.error?.message ?? r.stderr.trim()})`, "bash scripts/python-tools.sh installs it into .venv; or --temporal-cli PATH, or --temporal external");
      return ok(`${r.stdout.trim()} (${cli}): the single-machine server, on a file database under the data directory`);
    },
  };
}

/** The doctor's clock check against the PostgreSQL server (its maintenance database: the store may not exist yet; no admin API runs yet). */
function clockAgainstStore(databaseUrl: string): Check {
  const server = new URL(databaseUrl);
  server.pathname = "/postgres";
  return { ...clock, run: (ctx) => clock.run({ ...ctx, env: { ...ctx.env, LLMGW_ADMIN_URL: undefined, DATABASE_URL: server.href } }) };
}

export async function serverInit(argv: string[]): Promise<number> {
  // Each step says what it did; the components' own info lines (each migration…) would bury that.
  setLogProcess("server-init", "warn");
  let raw: Record<string, unknown>;
  try {
    raw = choicesFromFlags(argv, process.env);
  } catch (err) {
    process.stderr.write(`llmgw server init: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (raw.help) return say(USAGE), 0;
  const parsed = choicesSchema.safeParse(raw);
  if (!parsed.success) {
    const flag = (p: PropertyKey[]) => `--${String(p[0] ?? "").replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`;
    process.stderr.write(`llmgw server init: ${parsed.error.issues.map((i) => `${flag(i.path)}: ${i.message}`).join("; ")}\n`);
    return 2;
  }
  let c = parsed.data;
  if (c.bundle && (c.yes || process.stdin.isTTY)) {
    // The installed copy asks the questions and does the rest (launcher/bundle/run-installed.ts).
    const { runFromBundle } = await import("../bundle/run-installed.ts");
    return runFromBundle("server init", c.bundle, layoutFor(c).prefix, argv);
  }
  if (!c.yes) {
    if (!process.stdin.isTTY) {
      process.stderr.write("llmgw server init: not at a terminal: give the choices as flags with --yes (llmgw server init --help)\n");
      return 2;
    }
    const answered = await ask(c);
    if (!answered) return say("nothing installed"), 1;
    c = answered;
  }
  const layout = layoutFor(c);
  const settings = settingsFor(c, layout);
  // The namespace a local real server gets registered (the dev server's unit makes "default" at its start).
  const namespace = settings.LLMGW_TEMPORAL_NAMESPACE ?? "default";
  const secrets: Record<SecretName, string> = {
    LLMGW_CLUSTER_TOKEN: keptSecret(layout, "LLMGW_CLUSTER_TOKEN") ?? newToken(),
    LLMGW_ADMIN_TOKEN: keptSecret(layout, "LLMGW_ADMIN_TOKEN") ?? newToken(),
    LLMGW_NOTIFY_SECRET: keptSecret(layout, "LLMGW_NOTIFY_SECRET") ?? newToken(),
    DATABASE_URL: c.databaseUrl,
    REDIS_URL: c.redisUrl,
  };
  const temporalUnits: UnitName[] = { dev: ["llmgw-temporal" as const], server: ["llmgw-temporal" as const, "llmgw-temporal-ui" as const], external: [] }[c.temporal];
  const bins = c.temporal === "server" ? binsIn(c.temporalServerDir!) : undefined;
  const units: UnitName[] = [...temporalUnits, ...(c.agent === "yes" ? (["llmgw-agent"] as const) : []), "llmgw-worker", "llmgw-gateway"];

  say(`[1/5] checking this machine`);
  const env = { PATH: process.env.PATH, ...settings, ...secrets };
  const kinds: ProcessKind[] = ["gateway", "worker", ...(c.agent === "yes" ? (["agent"] as const) : []), ...(c.temporal !== "external" ? (["temporal"] as const) : [])];
  const ports: Record<string, number> = { LLMGW_CLIENT_PORT: c.clientPort, LLMGW_ADMIN_PORT: c.adminPort, LLMGW_CONTROL_PORT: c.controlPort };
  if (c.agent === "yes") ports.LLMGW_AGENT_PORT = c.agentPort;
  if (c.temporal !== "external") Object.assign(ports, { "Temporal, --temporal-port": c.temporalPort, "its Web UI, --temporal-port + 1000": c.temporalPort + 1000 });
  // The real server's other services and its metrics take the ports above the frontend.
  if (c.temporal === "server") for (let i = 1; i <= 9; i++) ports[`Temporal's, --temporal-port + ${i}`] = c.temporalPort + i;
  for (const k of ["LLMGW_METRICS_PORT", "LLMGW_WORKER_METRICS_PORT", "LLMGW_RUN_METRICS_PORT", ...(c.agent === "yes" ? ["LLMGW_AGENT_METRICS_PORT"] : [])]) {
    ports[k] = Number(settings[k] ?? { LLMGW_METRICS_PORT: 9091, LLMGW_WORKER_METRICS_PORT: 9092, LLMGW_AGENT_METRICS_PORT: 9093, LLMGW_RUN_METRICS_PORT: 9094 }[k]);
  }
  let checks;
  try {
    // Every setting checked with config.ts's schema before the checks run against them.
    checkSettings(settings, secrets);
    checks = await preflight(
      ["redis", "tls", "disk", ...(c.agent === "yes" ? ["gpus"] : []), ...(c.temporal === "external" ? ["temporal"] : [])],
      [storeCheck(c.databaseUrl), portsCheck(c.host, ports), memoryCheck(kinds), clockAgainstStore(c.databaseUrl), ...(c.temporal === "dev" ? [temporalCliCheck(c.temporalCli!)] : []), ...(bins ? [temporalServerCheck(bins)] : [])],
      env,
    );
  } catch (err) {
    process.stderr.write(`llmgw server init: ${(err as Error).message}\nnothing was installed\n`);
    return 2;
  }
  process.stdout.write(formatFindings(checks.findings));
  if (checks.failed) {
    process.stderr.write("\nllmgw server init: refused: a check failed (FAIL above); nothing was installed. Fix it and run llmgw server init again.\n");
    return 1;
  }

  say(`[2/5] writing the settings`);
  const owner = layout.prefix === "/" ? ensureUser(layout.user, layout.dataDir) : undefined;
  for (const d of [layout.dataDir, path.join(layout.dataDir, "temporal")]) {
    fs.mkdirSync(d, { recursive: true, mode: 0o750 });
    if (owner) fs.chownSync(d, owner.uid, owner.gid);
  }
  const written = writeSettings(layout, settings, secrets, "llmgw's settings, written by llmgw server init (docs/configuration.md names each).\nSecrets are in files of their own (mode 0600), named by the *_FILE settings.", owner);
  say(`      ${written.settingsFile}`);
  for (const f of written.secretFiles) say(`      ${f} (0600)`);

  say(`[3/5] setting up the store`);
  say(`      ${await setUpStore(c.databaseUrl)}`);
  if (bins) {
    try {
      say(`      ${setUpTemporalDatabases(bins, c.databaseUrl)}`);
    } catch (err) {
      process.stderr.write(`llmgw server init: ${(err as Error).message}\n`);
      return 1;
    }
  }

  say(`[4/5] installing the units${{ dev: " (Temporal: the single-machine server, llmgw-temporal)", server: " (Temporal: temporal-server on PostgreSQL, llmgw-temporal and llmgw-temporal-ui)", external: ` (Temporal: ${c.temporalAddress})` }[c.temporal]}`);
  let temporalUnit: TemporalUnit | undefined;
  if (c.temporal === "dev") temporalUnit = { cli: c.temporalCli!, port: c.temporalPort };
  if (bins) {
    for (const f of writeTemporalServerConfig(layout, { port: c.temporalPort, databaseUrl: c.databaseUrl, namespace, owner })) say(`      ${f}`);
    temporalUnit = { server: bins.server, ui: bins.ui, configDir: configDir(layout) };
  }
  for (const f of writeUnits(layout, units, temporalUnit)) say(`      ${f}`);
  if (!layout.systemctl) {
    say(`      not started (--prefix without --systemctl). Start them with systemctl, or all in one process:`);
    say(`        LLMGW_SETTINGS_FILE=${layout.settingsFile} llmgw run`);
  } else {
    if (c.temporal !== "external") {
      // Temporal first, answering with its namespace, so the worker's first start finds it.
      startUnits(layout, ["llmgw-temporal"]);
      say(`      started llmgw-temporal; waiting for it on ${settings.TEMPORAL_ADDRESS}`);
      if (bins) {
        // The real server starts with no namespace: llmgw's is registered once it answers.
        try {
          say(`      ${await registerNamespace(settings.TEMPORAL_ADDRESS!, namespace, Math.max(c.waitS, 60) * 1000)}`);
        } catch (err) {
          process.stderr.write(`llmgw server init: Temporal did not come up: ${(err as Error).message} (journalctl -u llmgw-temporal)\n`);
          return 1;
        }
      }
      const up = await untilTemporal({ PATH: process.env.PATH, ...settings }, Math.max(c.waitS, 30) * 1000);
      if (!up.ok) {
        process.stderr.write(`llmgw server init: Temporal did not come up: ${up.detail} (journalctl -u llmgw-temporal)\n`);
        return 1;
      }
      say(`      ${up.detail}`);
    }
    const rest = units.filter((u) => u !== "llmgw-temporal");
    startUnits(layout, rest, c.temporal === "external");
    say(`      started ${rest.join(", ")}`);
    if (c.waitS > 0) {
      say(`      waiting for the gateway to answer on port ${c.clientPort}`);
      const answered = await untilAnswers(`http://127.0.0.1:${c.clientPort}/health`, c.waitS * 1000);
      if (!answered) {
        process.stderr.write(`llmgw server init: the gateway did not answer within ${c.waitS} s: see journalctl -u llmgw-gateway (llmgw status shows each unit)\n`);
        return 1;
      }
      say(`      the gateway answers: client API http://${c.advertise}:${c.clientPort}/v1, admin API ${settings.LLMGW_ADMIN_URL}/api/v1`);
    }
  }

  say(`[5/5] done. To add a machine as a node, copy ${secretPath(layout, "LLMGW_CLUSTER_TOKEN")} to it (mode 0600) and run there, as root:`);
  say(`        llmgw node join ${settings.LLMGW_CONTROL_ADDRESS} --token-file ./cluster-token`);
  say(`      The admin token (llmgw ctl, the admin API) is in ${secretPath(layout, "LLMGW_ADMIN_TOKEN")}.`);
  return 0;
}

/** Polls the doctor's Temporal check (frontend and namespace) until it passes or `ms` pass. */
async function untilTemporal(env: NodeJS.ProcessEnv, ms: number): Promise<{ ok: boolean; detail: string }> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await temporalCheck.run({ env, timeoutMs: 3000 });
    if (r.status === "ok" || Date.now() > until) return { ok: r.status === "ok", detail: r.detail };
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
