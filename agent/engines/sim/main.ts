// The sim engine as a process, as the agent starts it per replica (agent/engines/sim.ts):
//   node --import tsx agent/engines/sim/main.ts --port 18001 --model sim-chat [--ttft-ms 0]
//     [--tokens-per-second 0] [--slots 64] [--load-delay-ms 0] [--max-tokens-default 16]
//     [--context-length 4096] [--api-key-env NAME] [--host 127.0.0.1] [--prefix-cache-ttft-ms N]
//     [--lora-load-ms 0] [--reasoning true] [--guard-judge true]
// Every flag also reads SIM_<NAME> from the environment (SIM_TTFT_MS, ...) when absent (settings.ts).
// A bad flag exits 2 with a message; SIGTERM or SIGINT lets requests in flight finish, then exits 0.
import { log, setLogProcess } from "../../../common/logging.ts";
import { startSim } from "./server.ts";
import { simSettingsFromArgs, type SimSettings } from "./settings.ts";

setLogProcess("sim");
let settings: SimSettings;
try {
  settings = simSettingsFromArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`sim: ${(e as Error).message}\n`);
  process.exit(2);
}
startSim(settings).then(
  (h) => {
    log.info("sim engine listening", {
      port: h.port,
      host: settings.host,
      model: settings.model,
      ttft_ms: settings.ttftMs,
      // (field names avoid the words the logger masks as secrets)
      rate_per_s: settings.tokensPerSecond,
      slots: settings.slots,
      load_delay_ms: settings.loadDelayMs,
      default_max_new: settings.maxTokensDefault,
      context_length: settings.contextLength,
      auth: settings.apiKeyEnv && process.env[settings.apiKeyEnv] ? "bearer" : "none",
    });
    let signalled = false;
    const stop = (sig: string) => {
      if (signalled) return;
      signalled = true;
      log.info("sim engine stopping", { signal: sig });
      h.close().then(() => process.exit(0));
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  },
  (e: unknown) => {
    log.error("sim engine failed to start", { err: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  },
);
