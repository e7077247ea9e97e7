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

/**
 * ctl node remove NODE [--force]: drain it (its replicas moved elsewhere), then remove it from the
 * store. The admin API refuses while replicas remain or the node's agent still runs (it would
 * register the node again): the drain is done by then, so stopping the agent and running this
 * again finishes it. --force removes it regardless.
 */
async function removeNode(id: string, force: boolean, json: boolean): Promise<void> {
  const admin = adminClient();
  const { data } = await admin.get<{ data: { id: string; replicas: number }[] }>("/nodes");
  const n = data.find((x) => x.id === id);
  if (!n) throw new CtlError(`no node '${id}'; nodes: ${data.map((x) => x.id).join(", ") || "(none)"}`);
  let moved = 0;
  if (n.replicas > 0) {
    const started = await admin.post<{ operationId: string }>(`/nodes/${encodeURIComponent(id)}/drain`, {});
    if (!json) process.stderr.write(`draining ${id}: ${n.replicas} replica(s) to move (${started.operationId})\n`);
    try {
      const final = await followOperation(started.operationId, { quiet: json });
      moved = final.progress?.ready ?? 0;
    } catch (err) {
      if (!force) throw new CtlError(`${id} is not removed: the drain did not finish (${(err as Error).message}); --force removes it with its replicas`);
      if (!json) process.stderr.write(`the drain did not finish (${(err as Error).message}); removing it anyway (--force)\n`);
    }
  }
  const r = await admin.request<{ id: string; removed: true; replicas: number }>("DELETE", `/nodes/${encodeURIComponent(id)}${force ? "?force=true" : ""}`);
  if (json) return printJson({ ...r, moved });
  process.stdout.write(`${id}: removed${n.replicas ? ` (${moved} replica(s) moved first${r.replicas ? `, ${r.replicas} removed with it` : ""})` : ""}\n`);
}

/** ctl node cordon|uncordon|drain|remove NODE: keep new replicas off a node, move its replicas elsewhere, or remove it. */
export async function nodeCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: "boolean" }, wait: { type: "boolean" }, force: { type: "boolean" } } });
  const id = positionals[0];
  if (!id || !["cordon", "uncordon", "drain", "remove"].includes(cmd ?? "")) throw new CtlError("usage: llmgw ctl node cordon|uncordon|drain NODE [--wait] [--json] | node remove NODE [--force] [--json]");
  if (cmd === "remove") return removeNode(id, values.force === true, values.json === true);
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
