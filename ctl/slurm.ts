// ctl slurm status | lend NODE [--force] [--wait] | reclaim NODE [--deadline 2h] [--wait]
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { followOperation } from "./operations.ts";
import { printJson, printTable } from "./output.ts";

interface SlurmNodeView {
  id: string;
  llmgw: string;
  lendable: boolean;
  slurm: { available: boolean; state: string; reason: string; error: string } | null;
  jobs: { id: string }[];
}

const USAGE = "usage: llmgw ctl slurm status | lend NODE [--force] [--wait] | reclaim NODE [--deadline 2h] [--wait] [--json]";

export async function slurmCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: "boolean" }, force: { type: "boolean" }, wait: { type: "boolean" }, deadline: { type: "string" } },
  });
  const admin = adminClient();
  if (cmd === "status") {
    const s = await admin.get<{ enabled: boolean; controller: string | null; partition: string; data: SlurmNodeView[] }>("/slurm");
    if (values.json) return printJson(s);
    process.stdout.write(`Slurm ${s.enabled ? "enabled" : "not enabled"}${s.controller ? `, controller ${s.controller}` : ""}, partition ${s.partition}\n`);
    return printTable(
      ["NODE", "LLMGW", "SLURM", "REASON", "JOBS", "LENDABLE"],
      s.data.map((n) => [n.id, n.llmgw, n.slurm ? (n.slurm.available ? n.slurm.state : `unavailable: ${n.slurm.error}`) : null, n.slurm?.reason || null, n.jobs.length, n.lendable]),
    );
  }
  const node = positionals[0];
  if ((cmd !== "lend" && cmd !== "reclaim") || !node) throw new CtlError(USAGE);
  const body = cmd === "lend" ? { force: values.force === true } : { deadline: values.deadline ?? null };
  const { operationId } = await admin.post<{ operationId: string; uiUrl: string }>(`/slurm/nodes/${encodeURIComponent(node)}/${cmd}`, body);
  const op = values.wait ? await followOperation(operationId, { quiet: values.json === true }) : null;
  if (values.json) return printJson(op ?? { operationId });
  process.stdout.write(op ? `${cmd} of ${node}: ${op.progress?.message ?? op.status}\n` : `${cmd} of ${node} started: ${operationId}\n  follow: llmgw ctl operation show ${operationId} --follow\n`);
}
