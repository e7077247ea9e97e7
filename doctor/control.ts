// A node must reach the gateway's Control service, where its agent registers and heartbeats.
import net from "node:net";
import { loadConfig } from "../common/config.ts";
import { fail, ok, type Check } from "./finding.ts";

export const control: Check = {
  name: "control",
  roles: ["node"],
  async run(ctx) {
    const address = loadConfig(ctx.env).LLMGW_CONTROL_ADDRESS;
    const i = address.lastIndexOf(":");
    const host = address.slice(0, i).replace(/^\[|\]$/g, "");
    const port = Number(address.slice(i + 1));
    const reached = await new Promise<string | null>((resolve) => {
      const s = net.connect({ host, port, timeout: ctx.timeoutMs });
      s.once("connect", () => (s.destroy(), resolve(null)));
      s.once("timeout", () => (s.destroy(), resolve("timed out")));
      s.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    if (reached === null) return ok(`the control service at ${address} accepts connections`);
    return fail(`the control service at ${address} is not reachable (${reached})`, "start the gateway, open port 7071 between node and gateway, or set LLMGW_CONTROL_ADDRESS");
  },
};
