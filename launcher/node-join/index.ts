// `llmgw node join ADDRESS --token-file FILE`: adds this machine to a cluster as a node, each step
// said as it goes:
//   1. checks the machine as `llmgw doctor --role node` does (the control service reachable, GPUs,
//      disk, TLS files), plus its ports and memory, and refuses before installing anything;
//   2. enrols: fetches the cluster's CA, kept only if it checks with the token, and gets the node's
//      certificate over TLS verified against it (agent/enrol.ts; a wrong token is refused here);
//   3. writes the agent's settings (the token in a file of mode 0600) and installs llmgw-agent;
//   4. waits until the agent has registered with the control plane.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { agentTls } from "../../agent/enrol.ts";
import { loadConfig } from "../../common/config.ts";
import { setLogProcess } from "../../common/logging.ts";
import { tlsFilesFrom } from "../../common/tls/operator-files.ts";
import { layoutFor } from "../server-init/layout.ts";
import { formatFindings, memoryCheck, portsCheck, preflight } from "../server-init/preflight.ts";
import { writeSettings } from "../server-init/settings-file.ts";
import { startUnits, writeUnits } from "../server-init/systemd.ts";

export const USAGE = `usage: llmgw node join ADDRESS (--token-file FILE | --token TOKEN) [flags]
  Adds this machine as a node of the cluster whose Control service is at ADDRESS (HOST:PORT, as
  llmgw server init printed it): checks the machine, gets its certificate with the cluster token,
  installs and starts the llmgw-agent unit, and waits until the control plane has the node.
  The token is the server's /etc/llmgw/secrets/cluster-token; --token-file keeps it out of ps and
  shell history.

  --node-id ID        this node's name (its host name)
  --advertise HOST    the address the control plane reaches this machine at (its first non-loopback IPv4)
  --host ADDR         the interface the agent listens on (0.0.0.0)
  --agent-port N      the agent's gRPC port (7070)
  --data-dir DIR      data directory (/var/lib/llmgw)
  --set KEY=VALUE     any other agent setting (docs/configuration.md); repeatable
  --wait-s N          how long to wait for the registration (120; 0: do not wait)
  --prefix DIR        install under DIR instead of / (a root of its own), calling no systemctl
  --systemctl PATH    the systemctl to call (with --prefix: a stand-in)
  --bundle FILE       install llmgw first from an offline bundle (llmgw bundle create), checked file by
                      file against its manifest, into <prefix>/opt/llmgw; then join with that copy`;

const flags = z.object({
  address: z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^\s:[\]/]+):\d{1,5}$/, "HOST:PORT of the Control service"),
  nodeId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/, "letters, digits, '.', '_' or '-'"),
  advertise: z.string().regex(/^[^\s:/]+$|^\[[0-9a-fA-F:]+\]$/, "a host name or address, without a port"),
  host: z.string().min(1),
  agentPort: z.coerce.number().int().min(1).max(65535),
  set: z.array(z.string().regex(/^[A-Z][A-Z0-9_]*=/, "KEY=VALUE")),
  waitS: z.coerce.number().int().min(0),
});

const say = (s: string) => void process.stdout.write(s + "\n");
const refuse = (why: string, code = 1) => (process.stderr.write(`llmgw node join: ${why}\n`), code);

function firstAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return "127.0.0.1";
}

/** The token from --token-file or --token; an error naming the flag. */
function readToken(v: { token?: string | undefined; "token-file"?: string | undefined }): string {
  if (!!v.token === !!v["token-file"]) throw new Error("give the cluster token with --token-file FILE (or --token TOKEN), one of them");
  if (v.token) return v.token.trim();
  try {
    const t = fs.readFileSync(v["token-file"]!, "utf8").trim();
    if (!t) throw new Error("it is empty");
    return t;
  } catch (err) {
    throw new Error(`--token-file ${v["token-file"]}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Resolves once `file` was written at or after `since`, or with false after `ms`. */
async function untilRegistered(file: string, since: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const at = Date.parse((JSON.parse(fs.readFileSync(file, "utf8")) as { at: string }).at);
      if (at >= since) return true;
    } catch {
      // Not yet.
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}

export async function nodeJoin(argv: string[]): Promise<number> {
  // Each step says what it did; a refused enrolment is said once, with its reason, not per attempt.
  setLogProcess("node-join", "error");
  const started = Date.now() - 1000;
  let values, positionals, token: string;
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: "boolean" }, token: { type: "string" }, "token-file": { type: "string" },
        "node-id": { type: "string", default: os.hostname() }, advertise: { type: "string" }, host: { type: "string", default: "0.0.0.0" },
        "agent-port": { type: "string", default: "7070" }, "data-dir": { type: "string" }, set: { type: "string", multiple: true, default: [] },
        "wait-s": { type: "string", default: "120" }, prefix: { type: "string" }, systemctl: { type: "string" }, bundle: { type: "string" },
      },
    }));
    if (values.help) return say(USAGE), 0;
    if (values.bundle) {
      // The installed copy checks the flags, the token included, and does the rest.
      const { runFromBundle } = await import("../bundle/run-installed.ts");
      return runFromBundle("node join", values.bundle, layoutFor({ prefix: values.prefix }).prefix, argv);
    }
    if (positionals.length !== 1) throw new Error("give the Control service's ADDRESS (HOST:PORT), once");
    token = readToken(values);
  } catch (err) {
    return refuse(`${(err as Error).message}\n${USAGE}`, 2);
  }
  const checked = flags.safeParse({ address: positionals[0], nodeId: values["node-id"], advertise: values.advertise ?? firstAddress(), host: values.host, agentPort: values["agent-port"], set: values.set, waitS: values["wait-s"] });
  if (!checked.success) return refuse(checked.error.issues.map((i) => `--${String(i.path[0]).replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}: ${i.message}`).join("; "), 2);
  const f = checked.data;
  const layout = layoutFor({ prefix: values.prefix, dataDir: values["data-dir"], systemctl: values.systemctl, user: "root" });
  const settings: Record<string, string> = {
    LLMGW_DATA_DIR: layout.dataDir,
    LLMGW_CONTROL_ADDRESS: f.address,
    LLMGW_NODE_ID: f.nodeId,
    LLMGW_HOST: f.host,
    LLMGW_AGENT_PORT: String(f.agentPort),
    LLMGW_AGENT_ADDRESS: `${f.advertise}:${f.agentPort}`,
  };
  for (const kv of f.set) settings[kv.slice(0, kv.indexOf("="))] = kv.slice(kv.indexOf("=") + 1);
  let config;
  try {
    config = loadConfig({ ...settings, LLMGW_CLUSTER_TOKEN: token });
  } catch (err) {
    return refuse((err as Error).message, 2);
  }

  say(`[1/4] checking this machine (llmgw doctor --role node)`);
  const checks = await preflight(["control", "tls", "gpus", "disk"], [portsCheck(f.host, { LLMGW_AGENT_PORT: f.agentPort, LLMGW_AGENT_METRICS_PORT: config.LLMGW_AGENT_METRICS_PORT }), memoryCheck(["agent"])], { PATH: process.env.PATH, ...settings });
  process.stdout.write(formatFindings(checks.findings));
  if (checks.failed) return refuse("refused: a check failed (FAIL above); nothing was installed. Fix it and run llmgw node join again.");

  say(`[2/4] enrolling with the control plane at ${f.address}`);
  const tlsDir = path.join(layout.dataDir, "agent", f.nodeId, "tls");
  const tls = await agentTls({ dir: tlsDir, nodeId: f.nodeId, token, controlAddress: f.address, files: tlsFilesFrom(config), attempts: 3 });
  // Enrolment waits between attempts on timers that do not hold the process (an agent has a server
  // for that): this one does, until it ends.
  const hold = setInterval(() => undefined, 1000);
  try {
    await tls.ready;
  } catch (err) {
    return refuse(`refused: the control plane did not enrol this node: ${(err as Error).message}. Nothing was installed.`);
  } finally {
    clearInterval(hold);
    tls.close();
  }
  say(`      certificate for node ${f.nodeId} kept in ${tlsDir} (key 0600)`);

  say(`[3/4] installing the agent`);
  const written = writeSettings(layout, settings, { LLMGW_CLUSTER_TOKEN: token }, "llmgw's agent settings, written by llmgw node join (docs/configuration.md names each).\nThe cluster token is in a file of its own (mode 0600), named by LLMGW_CLUSTER_TOKEN_FILE.");
  say(`      ${written.settingsFile}`);
  for (const file of written.secretFiles) say(`      ${file} (0600)`);
  for (const file of writeUnits(layout, ["llmgw-agent"])) say(`      ${file}`);
  if (!layout.systemctl) {
    say(`      not started (--prefix without --systemctl). Start it: LLMGW_SETTINGS_FILE=${layout.settingsFile} llmgw agent`);
    return 0;
  }
  startUnits(layout, ["llmgw-agent"]);
  say(`      started llmgw-agent`);

  say(`[4/4] registering`);
  if (f.waitS === 0) return say(`      not waited for (--wait-s 0): on the server, llmgw ctl nodes lists it once it has`), 0;
  if (!(await untilRegistered(path.join(layout.dataDir, "agent", f.nodeId, "registered"), started, f.waitS * 1000))) {
    return refuse(`the agent did not register within ${f.waitS} s: see journalctl -u llmgw-agent (llmgw status agent)`);
  }
  say(`      node ${f.nodeId} registered: the control plane lists it (on the server: llmgw ctl nodes), at ${settings.LLMGW_AGENT_ADDRESS}`);
  return 0;
}
