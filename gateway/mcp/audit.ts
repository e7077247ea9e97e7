// Each tool call in the audit log (`llmgw ctl audit --source mcp`): who, which tool, the
// arguments' size and sha256 (never their text), the outcome and how long it took.
import { createHash, randomUUID } from "node:crypto";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { actorOf, type McpCaller } from "./caller-key.ts";
import type { Outcome } from "./metrics.ts";

export const MCP_AUDIT_ACTION = "mcp.call";

export interface CallRecord {
  key: McpCaller;
  tool: string;
  argsJson: string;
  outcome: Outcome;
  durationMs: number;
}

/** Written in the background: a slow store never holds the caller's answer. */
export function recordCall(db: PrismaClient, c: CallRecord): void {
  const after = {
    project: c.key.projectId,
    argsBytes: Buffer.byteLength(c.argsJson),
    argsSha256: createHash("sha256").update(c.argsJson).digest("hex"),
    outcome: c.outcome,
    durationMs: Math.round(c.durationMs),
  };
  db.auditEvent
    .create({ data: { id: randomUUID(), actor: actorOf(c.key), personId: c.key.signedIn?.personId ?? c.key.personId ?? null, action: MCP_AUDIT_ACTION, target: c.tool, after } })
    .catch((err: unknown) => log.warn("MCP call not audited", { tool: c.tool, error: (err as Error).message }));
}
