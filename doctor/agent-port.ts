// The agent's gRPC port: an agent listening there, or free for one to bind — not another program.
import net from "node:net";
import { loadConfig } from "../common/config.ts";
import { fail, ok, warn, type Check } from "./finding.ts";

function connects(host: string, port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: ms });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("timeout", () => (s.destroy(), resolve(false)));
    s.once("error", () => resolve(false));
  });
}

export function binds(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    s.listen(port, host, () => s.close(() => resolve(null)));
  });
}

export const agentPort: Check = {
  name: "agent-port",
  roles: ["node"],
  async run(ctx) {
    const c = loadConfig(ctx.env);
    const port = c.LLMGW_AGENT_PORT;
    const probeHost = c.LLMGW_HOST === "0.0.0.0" || c.LLMGW_HOST === "::" ? "127.0.0.1" : c.LLMGW_HOST;
    if (await connects(probeHost, port, ctx.timeoutMs)) {
      return ok(`something answers on ${probeHost}:${port} (the agent, if \`llmgw ctl nodes\` lists this node)`);
    }
    const err = await binds(c.LLMGW_HOST, port);
    if (err === null) return warn(`no agent listens on ${c.LLMGW_HOST}:${port}; the port is free`, "start the agent: llmgw agent");
    return fail(`port ${port} on ${c.LLMGW_HOST} cannot be bound (${err})`, "free the port or set LLMGW_AGENT_PORT (and LLMGW_AGENT_ADDRESS to what the control plane dials)");
  },
};
