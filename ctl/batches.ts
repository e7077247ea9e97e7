// ctl batches list [--project P] [--status S] [--limit N] | show ID [--follow] | cancel ID: every
// project's /v1/batches batches for the operator, with a progress bar of each one's lines.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const USAGE = `usage: llmgw ctl batches list [--project P] [--status S] [--limit N]
       llmgw ctl batches show ID [--follow] | cancel ID      (every command: --json)`;
const POLL_MS = 1000;
const ENDED = new Set(["completed", "failed", "expired", "cancelled"]);
const BAR = 20;

interface BatchRow {
  id: string;
  project: string | null;
  endpoint: string;
  status: string;
  created_at: number;
  expires_at: number | null;
  input_file_id: string;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
  errors: { data: { message: string }[] } | null;
}

/** `[#########-----------]  45% 18/40 (1 failed)`: the lines answered of the total. */
export function progressBar(c: BatchRow["request_counts"]): string {
  const done = c.completed + c.failed;
  const share = c.total ? done / c.total : 0;
  const filled = Math.round(share * BAR);
  return `[${"#".repeat(filled)}${"-".repeat(BAR - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${done}/${c.total}${c.failed ? ` (${c.failed} failed)` : ""}`;
}

const when = (s: number | null) => (s ? new Date(s * 1000).toISOString().replace(/\.\d+Z$/, "Z") : null);

function describe(b: BatchRow): string {
  return [
    `${b.id}  ${b.status}  ${progressBar(b.request_counts)}`,
    `  project ${b.project ?? "-"} · ${b.endpoint} · created ${when(b.created_at)} · expires ${when(b.expires_at)}`,
    `  input ${b.input_file_id} · output ${b.output_file_id ?? "-"} · errors ${b.error_file_id ?? "-"}`,
    ...(b.errors?.data ?? []).map((e) => `  error: ${e.message}`),
  ].join("\n");
}

export async function batchesCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: "boolean" }, follow: { type: "boolean" }, project: { type: "string" }, status: { type: "string" }, limit: { type: "string" } },
  });
  const admin = adminClient();
  if (cmd === "list") {
    const q = new URLSearchParams(Object.entries({ project: values.project, status: values.status, limit: values.limit }).filter((e): e is [string, string] => e[1] !== undefined));
    const { data } = await admin.get<{ data: BatchRow[] }>(`/batches?${q}`);
    if (values.json) return printJson(data);
    return printTable(["ID", "PROJECT", "ENDPOINT", "STATUS", "PROGRESS", "CREATED"], data.map((b) => [b.id, b.project, b.endpoint, b.status, progressBar(b.request_counts), when(b.created_at)]));
  }
  const id = positionals[0];
  if (!id) throw new CtlError(USAGE);
  const at = `/batches/${encodeURIComponent(id)}`;
  if (cmd === "show") {
    let last = "";
    for (;;) {
      const b = await admin.get<BatchRow>(at);
      if (!values.follow || ENDED.has(b.status)) return values.json ? printJson(b) : void process.stdout.write(describe(b) + "\n");
      // Following: one line each time it changes, on stderr, so stdout holds only the end.
      const now = `  ${b.status} ${progressBar(b.request_counts)}`;
      if (now !== last && !values.json) process.stderr.write(now + "\n");
      last = now;
      await new Promise((res) => setTimeout(res, POLL_MS));
    }
  }
  if (cmd === "cancel") {
    const b = await admin.post<BatchRow>(`${at}/cancel`, {});
    return values.json ? printJson(b) : void process.stdout.write(`${b.id}: ${b.status} (lines in flight finish and are kept; the rest are not run)\n`);
  }
  throw new CtlError(USAGE);
}
