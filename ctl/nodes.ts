// ctl nodes: the fleet as the control plane sees it.
import { parseArgs } from "node:util";
import { adminClient } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

export async function listNodes(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { json: { type: "boolean" } } });
  const { data } = await adminClient().get<{ data: { id: string; address: string; cordoned: boolean; lastSeen: string; replicas: number }[] }>("/nodes");
  if (values.json) return printJson(data);
  const now = Date.now();
  printTable(
    ["NODE", "ADDRESS", "REPLICAS", "CORDONED", "LAST SEEN"],
    data.map((n) => [n.id, n.address, n.replicas, n.cordoned, `${Math.round((now - Date.parse(n.lastSeen)) / 1000)}s ago`]),
  );
}
