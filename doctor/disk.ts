// Free disk under the data directory: weights, engine logs and job files land there.
import fs from "node:fs";
import { diskFreeBytes } from "../agent/discovery/inventory.ts";
import { loadConfig } from "../common/config.ts";
import { fail, ok, warn, type Check } from "./finding.ts";

const GIB = 1024 ** 3;
export const DISK_WARN_BYTES = 50 * GIB;
export const DISK_FAIL_BYTES = 5 * GIB;

export const disk: Check = {
  name: "disk",
  roles: ["node", "control"],
  async run(ctx) {
    const dir = loadConfig(ctx.env).dataDir;
    // The nearest existing parent: a data directory not made yet is measured where it will be.
    let at = dir;
    while (!fs.existsSync(at) && at !== "/") at = at.slice(0, at.lastIndexOf("/")) || "/";
    const free = await diskFreeBytes(at);
    const shown = `${(free / GIB).toFixed(1)} GiB free under ${dir}`;
    if (free < DISK_FAIL_BYTES) return fail(shown, "free space or point LLMGW_DATA_DIR at a larger disk: a model's weights alone can need tens of GiB");
    if (free < DISK_WARN_BYTES) return warn(shown, "large models need more: free space or point LLMGW_DATA_DIR at a larger disk");
    return ok(shown);
  },
};
