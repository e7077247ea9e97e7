// ctl nodes: the fleet as the control plane sees it.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { followOperation } from "./operations.ts";
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

/** ctl node cordon|uncordon|drain NODE: keep new replicas off a node, or move its replicas elsewhere. */
export async function nodeCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: "boolean" }, wait: { type: "boolean" } } });
  const id = positionals[0];
  if (!id || !["cordon", "uncordon", "drain"].includes(cmd ?? "")) throw new CtlError("usage: llmgw ctl node cordon|uncordon|drain NODE [--wait] [--json]");
  const admin = adminClient();
  if (cmd !== "drain") {
    const r = await admin.post<{ id: string; cordoned: boolean }>(`/nodes/${encodeURIComponent(id)}/${cmd}`, {});
    return values.json ? printJson(r) : void process.stdout.write(`${r.id}: ${r.cordoned ? "cordoned" : "uncordoned"}\n`);
  }
  const started = await admin.post<{ operationId: string; uiUrl: string }>(`/nodes/${encodeURIComponent(id)}/drain`, {});
  if (!values.wait) return values.json ? printJson(started) : void process.stdout.write(`draining ${id}: ${started.operationId}\n  Temporal UI: ${started.uiUrl}\n`);
  const final = await followOperation(started.operationId, { quiet: values.json === true });
  if (values.json) printJson(final);
  else process.stdout.write(`${id}: drained (${final.progress?.ready ?? 0} replica(s) moved)\n`);
}
