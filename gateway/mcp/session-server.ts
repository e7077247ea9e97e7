// One /mcp session's MCP server (the SDK's low-level Server): tools/list and tools/call answered
// for the session's key, progress from the upstream passed on under the caller's own token, and
// the caller's cancellation passed up (the handler's signal reaches the upstream client).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { callTool, listTools, type McpDeps } from "./calls.ts";
import type { McpCaller } from "./caller-key.ts";
import type { Progress } from "./upstream.ts";

export interface SessionState {
  key: McpCaller;
}

const INSTRUCTIONS = "Tools of the company's servers, named <server>.<tool>, as far as your key is granted them; llmgw.* makes pictures, meshes and workflow runs; llmgw-admin.* reads the cluster (staff).";

export function sessionServer(deps: McpDeps, state: SessionState): Server {
  const server = new Server({ name: "llmgw", version: "1" }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listTools(deps, state.key) }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const token = req.params._meta?.progressToken;
    const onprogress =
      token === undefined
        ? undefined
        : (p: Progress) => void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...p } }).catch(() => undefined);
    return callTool(deps, state.key, req.params.name, req.params.arguments ?? {}, { signal: extra.signal, ...(onprogress && { onprogress }) });
  });
  return server;
}
