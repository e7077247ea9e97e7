// ctl audit [--since 24h] [--source admin|mcp]: admin changes and MCP tool calls, oldest first,
// every page of the span (GET /audit answers a page at a time; a busy day is more than one).
import { parseArgs } from "node:util";
import { adminClient } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

export async function auditCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { since: { type: "string", default: "24h" }, source: { type: "string" }, json: { type: "boolean" } } });
  type Row = { at: string; actor: string; action: string; target: string; before: unknown; after: unknown };
  const data: Row[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: Row[]; next: string | null } = await adminClient().get(
      `/audit?since=${encodeURIComponent(values.since)}${values.source ? `&source=${encodeURIComponent(values.source)}` : ""}${cursor ? `&cursor=${cursor}` : ""}`,
    );
    data.push(...page.data);
    cursor = page.next;
  } while (cursor);
  if (values.json) return printJson(data);
  if (values.source === "mcp") {
    // A call's figures; its arguments are there only as their size and hash.
    const f = (e: { after: unknown }) => (e.after ?? {}) as { outcome?: string; durationMs?: number; argsBytes?: number; argsSha256?: string };
    return printTable(["AT", "WHO", "TOOL", "OUTCOME", "MS", "ARGS BYTES", "ARGS SHA256"], data.map((e) => [e.at, e.actor, e.target, f(e).outcome, f(e).durationMs, f(e).argsBytes, f(e).argsSha256?.slice(0, 16)]));
  }
  printTable(["AT", "WHO", "WHAT", "TARGET"], data.map((e) => [e.at, e.actor, e.action, e.target]));
}
