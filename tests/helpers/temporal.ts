// A throwaway Temporal dev server for a test that kills and restarts it: the shared one serves every
// other test (and the other lane), so the outage is staged on a server of the test's own, started
// by scripts/services.sh under its own data directory and ports.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./platform.ts";

const SERVICES = fileURLToPath(new URL("../../scripts/services.sh", import.meta.url));

export interface ThrowawayTemporal {
  /** host:port for TEMPORAL_ADDRESS. */
  address: string;
  /** SIGKILL, down for downSeconds, then started again on the same file (services.sh kill-temporal). */
  kill(downSeconds: number): void;
  /** Stops the server and removes its files. */
  destroy(): void;
}

export async function startThrowawayTemporal(): Promise<ThrowawayTemporal> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-temporal-"));
  const [port, ui] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = { ...process.env, LLMGW_DATA_DIR: dir, LLMGW_TEMPORAL_PORT: String(port), LLMGW_TEMPORAL_UI_PORT: String(ui) };
  delete env.TEMPORAL_ADDRESS; // set: services.sh would take it for somebody else's and start nothing
  const services = (...args: string[]) => execFileSync("bash", [SERVICES, ...args], { env, stdio: ["ignore", "ignore", "pipe"], timeout: 240_000 });
  services("start", "temporal");
  return {
    address: `127.0.0.1:${port}`,
    kill: (downSeconds) => services("kill-temporal", String(downSeconds)),
    destroy: () => {
      services("stop", "temporal");
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
