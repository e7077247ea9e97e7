// llmgw <command>: one executable for every process and the operator's CLI.
// Each command loads what it needs when it runs; nothing heavy at the top (common/config.ts brings
// zod), so `llmgw ctl …` starts fast (docs/benchmarks.md, "ctl's start").
import type { Config } from "./common/config.ts";
import { log, setLogProcess } from "./common/logging.ts";
import { loadSettingsFile } from "./common/settings-file.ts";

const USAGE = `usage: llmgw <command>
  up                     bring the whole platform up locally and serve sim-chat
  run [--only a,b]       run the gateway, workers and agent, each restarted when it dies
  units [--dir DIR] …    the systemd units (llmgw-gateway, -worker, -agent, -temporal), written or printed
  status|start|stop|restart [unit…] [--json]   the installed units, through systemctl
  gateway                client API, admin API, metrics, Control gRPC
  worker [temporal|usage|all]   Temporal worker and/or the BullMQ consumers (usage ledger, notifications)
  agent                  the node agent (gRPC)
  sim [flags]            the simulated engine (started by the agent)
  migrate                apply the store's migrations
  node-flags <command>   the node flags <command> is to be started with here (bin/docker-entrypoint.sh)
  ctl <group> <command>  operate llmgw through the admin API (llmgw ctl for the list)
  doctor [--role node|control] [--json]   check what this machine needs, with what to do
  server init [--yes] …  install the control plane on this machine: checks, settings, store, Temporal, units
  node join ADDRESS --token-file F   add this machine as a node: checks, certificate, agent unit, registration
  bundle create [--out FILE]   one tarball to install from with no network (server init --bundle FILE)`;

/** Runs until SIGINT/SIGTERM, then closes what was started. */
function untilSignal(name: string, close: () => Promise<void>): void {
  let closing = false;
  const stop = (sig: string) => {
    if (closing) return;
    closing = true;
    log.info(`${name} stopping`, { signal: sig });
    close().then(
      () => process.exit(0),
      (err) => {
        log.error(`${name} did not stop cleanly`, { error: err });
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  // Under `llmgw run`/`up` stdin is a pipe from the supervisor: when it closes, the supervisor is gone.
  // The supervisor's mark on its children, read before (and whatever) config() says of their settings.
  if (process.env.LLMGW_SUPERVISED === "1") {
    process.stdin.on("end", () => stop("the supervisor's exit")).on("error", () => undefined);
    process.stdin.resume();
  }
}

/** Every setting, checked (common/config.ts). */
async function settings(): Promise<Config> {
  return (await import("./common/config.ts")).config();
}

async function migrateStore(): Promise<void> {
  const { ensureDatabase, migrate } = await import("./common/migrate.ts");
  const url = (await settings()).databaseUrl;
  await ensureDatabase(url);
  const applied = await migrate(url);
  if (applied.length) log.info("migrations applied", { applied });
}

async function main(argv: string[]): Promise<number | null> {
  const [cmd, ...rest] = argv;
  // An installed machine's settings (llmgw server init / node join wrote them), for every command
  // but those that write them.
  if (cmd !== "server" && cmd !== "node") loadSettingsFile();
  switch (cmd) {
    case "gateway": {
      const { missingGatewayNodeFlags, tuneGatewayHeap } = await import("./gateway/heap-tuning.ts");
      const config = await settings();
      tuneGatewayHeap(config);
      setLogProcess("gateway");
      const missing = missingGatewayNodeFlags(config);
      if (missing.length) {
        log.warn("the gateway was started without node flags it should have on this machine: start it as `node " + missing.join(" ") + " bin/llmgw.js gateway`", {
          flags: missing,
          setting: "LLMGW_GATEWAY_SINGLE_THREADED_GC",
        });
      }
      await migrateStore();
      const { startGateway } = await import("./gateway/server.ts");
      const gw = await startGateway();
      untilSignal("gateway", () => gw.close());
      return null;
    }
    case "worker": {
      const which = rest[0] ?? "all";
      if (!["temporal", "usage", "all"].includes(which)) throw new Error(`llmgw worker: unknown kind '${which}' (temporal, usage, all)`);
      setLogProcess(`worker-${which}`);
      const { WorkerMetrics } = await import("./workers/metrics.ts");
      const { serveMetrics } = await import("./common/metrics-server.ts");
      const config = await settings();
      const metrics = new WorkerMetrics();
      const served = await serveMetrics(metrics.registry, config.LLMGW_HOST, config.LLMGW_WORKER_METRICS_PORT);
      log.info("worker metrics listening", { metrics: served.port });
      const stops: (() => Promise<void>)[] = [() => served.close()];
      if (which !== "usage") {
        const { runTemporalWorker } = await import("./workers/temporal.ts");
        const w = await runTemporalWorker(metrics);
        stops.push(async () => {
          w.shutdown();
          await w.done;
        });
        // A worker whose run ends by itself (lost its server for good) must not linger half-alive.
        w.done.catch((err) => {
          log.error("temporal worker stopped", { error: err });
          process.exit(1);
        });
      }
      if (which !== "temporal") {
        // Alone in its process, the usage worker yields the CPU to the hot path (not beside a Temporal worker, which would yield too).
        if (which === "usage") (await import("./common/nice.ts")).setNice(config.LLMGW_USAGE_WORKER_NICE);
        const { runUsageWorker } = await import("./workers/usage.ts");
        const u = await runUsageWorker(metrics);
        stops.push(() => u.shutdown());
        const { runNotifyWorker } = await import("./workers/notify.ts");
        const n = await runNotifyWorker();
        stops.push(() => n.shutdown());
      }
      untilSignal("worker", async () => {
        await Promise.all(stops.map((s) => s()));
      });
      return null;
    }
    case "agent": {
      setLogProcess("agent");
      const { startAgent } = await import("./agent/server.ts");
      const a = await startAgent();
      untilSignal("agent", () => a.close());
      return null;
    }
    case "sim": {
      setLogProcess("sim");
      const { startSim } = await import("./agent/engines/sim/server.ts");
      const { simSettingsFromArgs } = await import("./agent/engines/sim/settings.ts");
      const s = await startSim(simSettingsFromArgs(rest));
      untilSignal("sim", () => s.close());
      return null;
    }
    case "node-flags": {
      // For launchers that are not llmgw (the image's entrypoint): V8 settings a running process cannot change.
      const { nodeFlagsFor } = await import("./common/children.ts");
      process.stdout.write(nodeFlagsFor(rest, process.env).join(" ") + "\n");
      return 0;
    }
    case "migrate":
      setLogProcess("migrate");
      await migrateStore();
      return 0;
    case "up": {
      setLogProcess("up");
      const { up } = await import("./launcher/up.ts");
      return up();
    }
    case "status":
    case "start":
    case "stop":
    case "restart": {
      const { serviceCommand } = await import("./launcher/service-control.ts");
      return serviceCommand(cmd, rest);
    }
    case "units": {
      const { unitsCommand } = await import("./launcher/units.ts");
      const { LLMGW_BIN } = await import("./common/children.ts");
      return unitsCommand(rest, LLMGW_BIN);
    }
    case "run": {
      setLogProcess("run");
      const { run } = await import("./launcher/run.ts");
      return run(rest);
    }
    case "doctor": {
      const { doctor } = await import("./doctor/index.ts");
      return doctor(rest);
    }
    case "server": {
      if (rest[0] !== "init") {
        process.stderr.write(`usage: llmgw server init [--yes] [flags] (llmgw server init --help)\n`);
        return 2;
      }
      const { serverInit } = await import("./launcher/server-init/index.ts");
      return serverInit(rest.slice(1));
    }
    case "node": {
      if (rest[0] !== "join") {
        process.stderr.write(`usage: llmgw node join ADDRESS --token-file FILE [flags] (llmgw node join --help)\n`);
        return 2;
      }
      const { nodeJoin } = await import("./launcher/node-join/index.ts");
      return nodeJoin(rest.slice(1));
    }
    case "bundle": {
      if (rest[0] !== "create") {
        process.stderr.write(`usage: llmgw bundle create [--out FILE] [--llama all|cpu] [--json] (llmgw bundle create --help)\n`);
        return 2;
      }
      const { bundleCreate } = await import("./launcher/bundle/create.ts");
      return bundleCreate(rest.slice(1));
    }
    case "ctl": {
      const { ctl } = await import("./ctl/index.ts");
      return ctl(rest);
    }
    case undefined:
    case "help":
    case "--help":
      process.stdout.write(USAGE + "\n");
      return 0;
    default:
      process.stderr.write(`unknown command '${cmd}'\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (err: Error) => {
    process.stderr.write(`llmgw: ${err.message}\n`);
    process.exit(1);
  },
);
