// `llmgw up`: the whole platform on this machine. Runs the gateway, a Temporal worker, the usage
// worker and one agent under the supervisor (launcher/run.ts: a process that dies is started again),
// serves sim-chat through the serve workflow, writes .data/endpoints.json and prints how to use it.
// Ctrl-C stops every process, in order.
import fs from "node:fs";
import path from "node:path";
import { config } from "../common/config.ts";
import { tail, waitFor } from "../common/children.ts";
import { readOrCreateSecret } from "../common/secrets.ts";
import { adminClientFor } from "../ctl/admin-client.ts";
import { PROCESSES, startRun, untilStopped } from "./run.ts";

const MODEL = "sim-chat";

interface Endpoints {
  clientUrl: string;
  adminUrl: string;
  adminToken: string;
  temporalUiUrl: string;
  metricsUrl: string;
  apiKey: string;
}

export async function up(): Promise<number> {
  const c = config();
  const logDir = path.join(c.dataDir, "logs");
  const endpointsFile = path.join(c.dataDir, "endpoints.json");
  const adminToken = readOrCreateSecret(c.dataDir, "admin-token", c.LLMGW_ADMIN_TOKEN);
  readOrCreateSecret(c.dataDir, "cluster-token", c.LLMGW_CLUSTER_TOKEN);
  const host = c.LLMGW_HOST === "0.0.0.0" ? "127.0.0.1" : c.LLMGW_HOST;
  const clientUrl = `http://${host}:${c.LLMGW_CLIENT_PORT}`;
  const adminUrl = `http://${c.LLMGW_ADMIN_HOST}:${c.LLMGW_ADMIN_PORT}`;
  // Engines stop with the platform here (not when the agent is merely restarted: a crash runs no
  // shutdown), and listen on loopback only: this machine is the whole cluster.
  const env = { ...process.env, LLMGW_AGENT_STOP_ENGINES_ON_EXIT: "1", LLMGW_ENGINE_HOST: c.LLMGW_ENGINE_HOST ?? "127.0.0.1" };

  const say = (s: string) => process.stderr.write(`llmgw up: ${s}\n`);
  say(`starting the gateway, workers and agent (logs in ${logDir})`);
  // Before it is up, a process that keeps dying (a bad setting, a taken port) ends `up` with its log.
  let crashLooping: (e: { name: string; logFile: string }) => void = () => undefined;
  const crashLoop = new Promise<{ name: string; logFile: string }>((resolve) => (crashLooping = resolve));
  const running = await startRun({ processes: PROCESSES, env, logDir, onCrashLoop: (name, logFile) => crashLooping({ name, logFile }) });
  const signalled = untilStopped();
  const admin = adminClientFor(adminUrl, adminToken).request;

  try {
    const ready = (async () => {
      await waitFor("the admin API", async () => (await fetch(`${adminUrl}/health`)).ok, 120_000);
      await waitFor("the agent to register", async () => (await admin<{ data: unknown[] }>("GET", "/nodes")).data.length > 0, 60_000);
      await admin("POST", "/projects", { name: "default" });
      const apiKey = await reuseOrCreateKey(endpointsFile, clientUrl, () => admin<{ key: string }>("POST", "/keys", { project: "default", name: "llmgw up" }));
      say(`serving ${MODEL} on the sim engine (workflow model/${MODEL})`);
      const { operationId } = await admin<{ operationId: string }>("POST", `/models/${MODEL}/serve`, { engine: "sim", replicas: 1 });
      await waitFor(`${MODEL} to be ready`, async () => {
        const op = await admin<{ status: string; error?: string }>("GET", `/operations/${operationId}`);
        if (op.status === "FAILED" || op.status === "TERMINATED") throw new Error(`serving ${MODEL} failed: ${op.error}`);
        return op.status === "COMPLETED";
      }, 180_000, 500);
      return apiKey;
    })();
    const first = await Promise.race([ready.then((k) => ({ key: k })), signalled.then((s) => ({ signal: s })), crashLoop.then((e) => ({ crashed: e }))]);
    if ("crashed" in first) throw new Error(`${first.crashed.name} keeps exiting:\n${tail(first.crashed.logFile)}`);
    if ("signal" in first) {
      await running.stop();
      return 130;
    }
    const endpoints: Endpoints = {
      clientUrl,
      adminUrl,
      adminToken,
      temporalUiUrl: c.LLMGW_TEMPORAL_UI_URL,
      metricsUrl: `http://${host}:${c.LLMGW_METRICS_PORT}/metrics`,
      apiKey: first.key,
    };
    fs.writeFileSync(endpointsFile, JSON.stringify(endpoints, null, 2) + "\n", { mode: 0o600 });
    fs.chmodSync(endpointsFile, 0o600);
    process.stdout.write(banner(endpoints, endpointsFile));
    // A process that dies from here on is started again by the supervisor: only a signal ends it.
    await signalled;
    say("stopping");
    await running.stop();
    return 0;
  } catch (err) {
    say((err as Error).message);
    await running.stop();
    return 1;
  }
}

/** The key from an earlier run if it still works, so a pasted curl keeps working across runs. */
async function reuseOrCreateKey(file: string, clientUrl: string, create: () => Promise<{ key: string }>): Promise<string> {
  try {
    const old = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Endpoints>;
    if (old.apiKey) {
      const res = await fetch(`${clientUrl}/v1/models`, { headers: { authorization: `Bearer ${old.apiKey}` } });
      if (res.ok) return old.apiKey;
    }
  } catch {
    // No earlier run, or its file is unreadable: make a new key.
  }
  return (await create()).key;
}

function banner(e: Endpoints, file: string): string {
  return `
llmgw is up. ${MODEL} is served on the sim engine.

  client API    ${e.clientUrl}/v1
  admin API     ${e.adminUrl}/api/v1   (token in ${file})
  Temporal UI   ${e.temporalUiUrl}
  metrics       ${e.metricsUrl}

Try it:
  curl -s ${e.clientUrl}/v1/chat/completions \\
    -H "Authorization: Bearer ${e.apiKey}" -H "Content-Type: application/json" \\
    -d '{"model":"${MODEL}","messages":[{"role":"user","content":"Hello!"}]}'

Operate it:  npx llmgw ctl models · npx llmgw ctl nodes · npx llmgw ctl model serve NAME --engine sim --replicas 2 --wait
Ctrl-C stops everything.
`;
}
