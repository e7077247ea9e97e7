// `llmgw run`: llmgw's processes on one machine, each restarted when it dies (launcher/supervisor.ts).
// `llmgw up` is this plus the embedded services and a model served. Every restart is logged and
// counted (llmgw_process_restarts_total on LLMGW_RUN_METRICS_PORT), and a process that keeps
// crashing raises a process_crashing notification. SIGINT or SIGTERM stops them in order: the
// gateway first (no new requests), then the workers, the agent last (it may stop its engines).
//
//   llmgw run [--only gateway,worker-temporal,worker-usage,agent]
import path from "node:path";
import { Counter, Gauge, Registry } from "prom-client";
import { config } from "../common/config.ts";
import { log } from "../common/logging.ts";
import { serveMetrics, type MetricsServer } from "../common/metrics-server.ts";
import { Notifier, raise, setNotifier } from "../common/notifier.ts";
import { redis } from "../common/redis.ts";
import { ProcessSupervisor, type ChildSpec } from "./supervisor.ts";

export const PROCESSES = ["gateway", "worker-temporal", "worker-usage", "agent"] as const;
export type ProcessName = (typeof PROCESSES)[number];

/** The order processes stop in. */
const STOP_ORDER: ProcessName[][] = [["gateway"], ["worker-temporal", "worker-usage"], ["agent"]];

function specFor(name: ProcessName, env: NodeJS.ProcessEnv): ChildSpec {
  switch (name) {
    case "gateway":
      return { name, args: ["gateway"], env };
    case "worker-temporal":
      return { name, args: ["worker", "temporal"], env };
    case "worker-usage":
      // Its /metrics on any free port (logged): the Temporal worker holds LLMGW_WORKER_METRICS_PORT.
      return { name, args: ["worker", "usage"], env: { ...env, LLMGW_WORKER_METRICS_PORT: "0" } };
    case "agent":
      return { name, args: ["agent"], env };
  }
}

export interface Running {
  supervisor: ProcessSupervisor;
  metricsPort: number | null;
  /** Stops the children in order, then the metrics and the notifier. */
  stop(): Promise<void>;
}

export async function startRun(opts: {
  processes: readonly ProcessName[];
  env: NodeJS.ProcessEnv;
  logDir: string;
  /** Told when a process reaches its restart limit (after the notification is raised). */
  onCrashLoop?: (name: string, logFile: string) => void;
}): Promise<Running> {
  const c = config();
  const registry = new Registry();
  const restarts = new Counter({ name: "llmgw_process_restarts_total", help: "Times llmgw run/up started a process again after it died", labelNames: ["process"], registers: [registry] });
  const up = new Gauge({ name: "llmgw_process_up", help: "1 while the process llmgw run/up supervises is running", labelNames: ["process"], registers: [registry] });
  const conn = redis(c.redisUrl, { lazyConnect: true });
  // Notifications are best effort here: the supervisor must run without Redis.
  conn.on("error", () => undefined);
  const notifier = new Notifier(conn);
  setNotifier(notifier);
  const supervisor = new ProcessSupervisor({
    logDir: opts.logDir,
    onState: (name, isUp) => up.set({ process: name }, isUp ? 1 : 0),
    onRestart: (e) => {
      restarts.inc({ process: e.name });
      log.warn("process exited; starting it again", { process: e.name, exit: e.exit, attempt: e.attempt, inMs: e.delayMs });
    },
    onCrashLoop: (e) => {
      raise({
        kind: "process_crashing",
        subject: e.name,
        summary: `${e.name} died ${e.restarts} times within a minute (last: ${e.lastExit}); it is started again as the limit allows`,
        details: { process: e.name, restarts: e.restarts, lastExit: e.lastExit },
      });
      opts.onCrashLoop?.(e.name, supervisor.child(e.name).logFile);
    },
  });
  supervisor.start(opts.processes.map((n) => specFor(n, opts.env)));
  let metrics: MetricsServer | null = null;
  try {
    metrics = await serveMetrics(registry, c.LLMGW_HOST, c.LLMGW_RUN_METRICS_PORT);
    log.info("supervisor metrics listening", { metrics: metrics.port });
  } catch (err) {
    log.error("supervisor metrics not served", { port: c.LLMGW_RUN_METRICS_PORT, error: (err as Error).message });
  }
  return {
    supervisor,
    metricsPort: metrics?.port ?? null,
    async stop() {
      await supervisor.stop(STOP_ORDER);
      await metrics?.close();
      setNotifier(null);
      await notifier.close().catch(() => undefined);
      conn.disconnect();
    },
  };
}

/** Parses `--only a,b`; every process when absent. */
export function chosenProcesses(argv: string[]): ProcessName[] {
  const i = argv.indexOf("--only");
  if (i < 0) return [...PROCESSES];
  const names = (argv[i + 1] ?? "").split(",").filter(Boolean);
  const bad = names.filter((n) => !(PROCESSES as readonly string[]).includes(n));
  if (!names.length || bad.length) throw new Error(`llmgw run: --only takes a comma list of ${PROCESSES.join(", ")}${bad.length ? ` (not ${bad.join(", ")})` : ""}`);
  return names as ProcessName[];
}

/** Resolves with the signal that asked the process to stop. */
export function untilStopped(): Promise<string> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
}

export async function run(argv: string[]): Promise<number> {
  const processes = chosenProcesses(argv);
  const logDir = path.join(config().dataDir, "logs");
  const r = await startRun({ processes, env: process.env, logDir });
  log.info("llmgw run: supervising", { processes, logs: logDir });
  const signal = await untilStopped();
  log.info("llmgw run: stopping", { signal });
  await r.stop();
  return 0;
}
