// GPUs and their driver, as nvidia-smi reports them (the agent's own discovery).
import { discoverGpus } from "../agent/discovery/inventory.ts";
import { loadConfig } from "../common/config.ts";
import { ok, warn, type Check } from "./finding.ts";

export const gpus: Check = {
  name: "gpus",
  roles: ["node"],
  async run(ctx) {
    const found = await discoverGpus(loadConfig(ctx.env).LLMGW_NVIDIA_SMI);
    if (found.length === 0) {
      return warn("no GPU found (nvidia-smi absent or failing)", "install the NVIDIA driver and check `nvidia-smi`; a node without GPUs can only run the sim engine and llama.cpp on CPU");
    }
    const drivers = [...new Set(found.map((g) => g.driverVersion).filter(Boolean))];
    const names = [...new Set(found.map((g) => g.name))].join(", ");
    if (drivers.length > 1) return warn(`${found.length} GPU(s) (${names}) report different drivers: ${drivers.join(", ")}`, "reboot after a driver upgrade so every GPU runs the same driver");
    return ok(`${found.length} GPU(s): ${names}; driver ${drivers[0] ?? "unknown"}`);
  },
};
