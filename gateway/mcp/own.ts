// llmgw's own tools on /mcp: `llmgw.*` (media and jobs) under the caller's tool grants like any
// server's, and `llmgw-admin.*` (read-only) for staff only: a person holding platform-admin or
// operator (signed in, or through their own key), or a key granted llmgw-admin by name (a grant
// of `*` does not reach it). Their arguments are checked with zod; what the platform refuses
// (a model not allowed, an unknown node, a blocked prompt) is the tool's error, as a server's is.
import { ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { PrismaClient } from "../../common/db.ts";
import { ApiError } from "../errors.ts";
import { GuardBlock } from "../guard/input.ts";
import { ADMIN_SERVER, adminTools, type AdminReads } from "./admin-tools.ts";
import { STAFF_ROLES, type McpCaller } from "./caller-key.ts";
import { toolGranted } from "./grants.ts";
import { MEDIA_SERVER, mediaTools, type MediaDeps } from "./media-tools.ts";
import { listed, toolError, type OwnCallContext, type OwnTool } from "./own-tool.ts";

export const OWN_SERVERS = [MEDIA_SERVER, ADMIN_SERVER] as const;

export interface OwnToolsDeps {
  db: PrismaClient;
  /** Absent: no llmgw-admin tools (a gateway without the admin API's reads). */
  admin: AdminReads | null;
  /** Absent: no media tools (a gateway without jobs). */
  media: MediaDeps | null;
}

export const isOwnServer = (server: string) => (OWN_SERVERS as readonly string[]).includes(server);

export class OwnTools {
  private readonly tools = new Map<string, OwnTool>();

  constructor(private readonly deps: OwnToolsDeps) {
    for (const t of [...(deps.media ? mediaTools(deps.media) : []), ...(deps.admin ? adminTools(deps.admin) : [])]) this.tools.set(t.name, t);
  }

  /** Whether the caller holds a staff role: a person signed in, or the person whose own key it is. */
  private async staffRole(caller: McpCaller): Promise<boolean> {
    if (caller.signedIn) return caller.signedIn.roles.some((r) => STAFF_ROLES.includes(r));
    if (!caller.personId) return false;
    return (await this.deps.db.membership.count({ where: { personId: caller.personId, scope: "platform", role: { in: STAFF_ROLES } } })) > 0;
  }

  private async may(caller: McpCaller, grants: readonly string[], name: string): Promise<boolean> {
    if (!name.startsWith(`${ADMIN_SERVER}.`)) return toolGranted(grants, name);
    return toolGranted(grants.filter((g) => g !== "*"), name) || (await this.staffRole(caller));
  }

  async list(caller: McpCaller, grants: readonly string[]): Promise<Tool[]> {
    const out: Tool[] = [];
    for (const t of this.tools.values()) if (await this.may(caller, grants, t.name)) out.push(listed(t));
    return out;
  }

  /** The call's answer; an unknown or ungranted tool throws -32602 as a server's does. */
  async call(caller: McpCaller, grants: readonly string[], name: string, args: Record<string, unknown>, ctx: Omit<OwnCallContext, "caller">): Promise<CallToolResult> {
    const t = this.tools.get(name);
    if (!t || !(await this.may(caller, grants, name))) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
    const parsed = t.input.safeParse(args);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `${name}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}`);
    try {
      return await t.run(parsed.data, { ...ctx, caller });
    } catch (err) {
      if (err instanceof GuardBlock) {
        const d = err.decisions[err.decisions.length - 1]!;
        return toolError(`the arguments were withheld by the guardrail rule '${d.rule}' of policy '${d.policy}'`);
      }
      const status = err instanceof ApiError ? err.status : (err as { status?: unknown }).status;
      if (typeof status === "number" && status < 500) return toolError((err as Error).message);
      throw err;
    }
  }
}
