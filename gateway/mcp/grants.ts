// Tool grants: patterns (`jira.*`, `files.read`, `*`) on the key, its project, team and org, in the
// limits' rows (Limit.tools). A key may use a tool when any of them grants it; nothing granted,
// nothing seen. Read from the store on each list and call, so a grant or its removal counts at once.
import type { PrismaClient } from "../../common/db.ts";
import { scopesOf } from "../auth/limit-book.ts";
import type { McpCaller } from "./caller-key.ts";

/** `jira.*` matches every tool of jira; `*` every tool; otherwise the exact name. */
export function toolGranted(patterns: readonly string[], tool: string): boolean {
  return patterns.some((p) => p === "*" || (p.endsWith(".*") ? tool.startsWith(p.slice(0, -1)) : p === tool));
}

/** A person signed in without a key: the grants of every scope they are a member of. */
export async function grantsOf(db: PrismaClient, key: McpCaller): Promise<string[]> {
  const rows = await db.limit.findMany({ where: { OR: [...scopesOf(key), ...(key.signedIn?.scopes ?? [])] }, select: { tools: true } });
  return [...new Set(rows.flatMap((r) => r.tools))];
}

/** What a grant pattern may look like (the admin API checks it). */
export const TOOL_PATTERN = /^(\*|[a-z][a-z0-9_-]{0,39}(\.\*|\.[A-Za-z0-9_./-]{1,128}))$/;
