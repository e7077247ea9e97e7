// ctl operation show ID [--follow]: progress of a long operation, shown until it ends; ctl operations
// list: the operations running now.
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { adminClient, CtlError, type AdminClient } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

export interface OperationView {
  id: string;
  status: string;
  progress: { phase: string; wanted: number; ready: number; message: string } | null;
  error?: string | null;
  uiUrl: string;
}

const POLL_MS = 500;
/** How long --wait rides out an admin API that cannot answer (a restarting gateway, a Temporal query
 * timing out on a busy worker) before giving up: the operation itself goes on regardless. */
const UNAVAILABLE_FOR_MS = 60_000;

/** Polls until the operation ends, printing each change of progress to stderr. */
export async function followOperation(
  id: string,
  opts: { quiet: boolean; admin?: AdminClient; pollMs?: number; unavailableForMs?: number },
): Promise<OperationView> {
  const admin = opts.admin ?? adminClient();
  const pollMs = opts.pollMs ?? POLL_MS;
  let last = "";
  let failingSince: number | null = null;
  for (;;) {
    let op: OperationView;
    try {
      op = await admin.get<OperationView>(`/operations/${id}`);
      failingSince = null;
    } catch (err) {
      // Unreachable (0) or a server error: transient. A 4xx (unknown id, bad token) is not.
      const status = err instanceof CtlError ? err.status : undefined;
      if (status === undefined || (status !== 0 && status < 500)) throw err;
      failingSince ??= Date.now();
      if (Date.now() - failingSince >= (opts.unavailableForMs ?? UNAVAILABLE_FOR_MS)) throw err;
      if (!opts.quiet) process.stderr.write(`  (no progress: ${(err as Error).message}; asking again)\n`);
      await sleep(pollMs);
      continue;
    }
    const line = op.progress ? `${op.status.toLowerCase()} · ${op.progress.phase} · ${op.progress.ready}/${op.progress.wanted} ready ${op.progress.message ? "· " + op.progress.message : ""}` : op.status.toLowerCase();
    if (line !== last && !opts.quiet) process.stderr.write(`  ${line}\n`);
    last = line;
    if (op.status === "COMPLETED") return op;
    if (op.status !== "RUNNING" && op.status !== "QUEUED") throw new CtlError(`operation ${id} ${op.status.toLowerCase()}: ${op.error ?? "see " + op.uiUrl}`);
    await sleep(pollMs);
  }
}

export interface RunningOperation {
  id: string;
  type: string;
  kind: string | null;
  model: string | null;
  node: string | null;
  startedAt: string;
  uiUrl: string;
}

async function listOperations(rest: string[]): Promise<void> {
  const { values } = parseArgs({ args: rest, options: { json: { type: "boolean" }, limit: { type: "string", default: "100" } } });
  const { data } = await adminClient().get<{ data: RunningOperation[] }>(`/operations?limit=${encodeURIComponent(values.limit)}`);
  if (values.json) return printJson(data);
  printTable(["ID", "TYPE", "KIND", "STARTED", "TEMPORAL UI"], data.map((o) => [o.id, o.type, o.kind ?? "", o.startedAt, o.uiUrl]));
}

export async function operationCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === "list") return listOperations(rest);
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: "boolean" }, follow: { type: "boolean" } } });
  const id = positionals[0];
  if (id && (cmd === "pause" || cmd === "resume" || cmd === "abort" || cmd === "promote")) {
    const r = await adminClient().post<{ id: string; action: string }>(`/operations/${id}/${cmd}`, {});
    return values.json ? printJson(r) : void process.stdout.write(`${cmd} sent to ${r.id}\n`);
  }
  if (cmd !== "show" || !id) throw new CtlError("usage: llmgw ctl operation show|pause|resume|abort|promote ID [--follow] [--json] | operations list [--limit N] [--json]");
  const op = values.follow ? await followOperation(id, { quiet: values.json === true }) : await adminClient().get<OperationView>(`/operations/${id}`);
  if (values.json) return printJson(op);
  process.stdout.write(`${op.id}: ${op.status}${op.progress ? ` (${op.progress.ready}/${op.progress.wanted} ready, ${op.progress.phase})` : ""}\n  Temporal UI: ${op.uiUrl}\n`);
}
