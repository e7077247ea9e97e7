// ctl audit [--since 24h]: admin changes, oldest first.
import { parseArgs } from "node:util";
import { adminClient } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

export async function auditCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { since: { type: "string", default: "24h" }, json: { type: "boolean" } } });
  const { data } = await adminClient().get<{ data: { at: string; actor: string; action: string; target: string; before: unknown; after: unknown }[] }>(
    `/audit?since=${encodeURIComponent(values.since)}`,
  );
  if (values.json) return printJson(data);
  printTable(["AT", "WHO", "WHAT", "TARGET"], data.map((e) => [e.at, e.actor, e.action, e.target]));
}
