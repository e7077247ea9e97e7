// ctl usage [--by org,team,project,person,model,key,day] [--from T] [--to T] [--gpu-seconds] [--csv]:
// the usage report, in money and tokens, and with --gpu-seconds the GPU time too (docs/people.md).
import { parseArgs } from "node:util";
import { toCsv } from "../common/csv.ts";
import { adminClient } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const MEASURES = ["requests", "promptTokens", "cachedTokens", "completionTokens", "cost"];

export async function usageCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { by: { type: "string" }, from: { type: "string" }, to: { type: "string" }, "gpu-seconds": { type: "boolean" }, csv: { type: "boolean" }, json: { type: "boolean" } },
  });
  const q = new URLSearchParams(Object.entries({ by: values.by, from: values.from, to: values.to }).filter((e): e is [string, string] => e[1] !== undefined));
  const r = await adminClient().get<{ by: string[]; data: Record<string, string | number | null>[] }>(`/usage?${q}`);
  const headers = [...r.by, ...MEASURES, ...(values["gpu-seconds"] ? ["gpuSeconds"] : [])];
  if (values.json) return printJson(r.data);
  if (values.csv) return void process.stdout.write(toCsv(headers, r.data));
  // A table is read by people: GPU-seconds to the millisecond.
  const cell = (row: Record<string, string | number | null>, h: string) => (h === "gpuSeconds" && typeof row[h] === "number" ? Number(row[h].toFixed(3)) : row[h]);
  printTable(headers.map((h) => (h === "gpuSeconds" ? "GPU-SECONDS" : h.toUpperCase())), r.data.map((row) => headers.map((h) => cell(row, h))));
}
