// ctl usage [--by project,model,key,day] [--from T] [--to T] [--csv]: the usage report.
import { parseArgs } from "node:util";
import { toCsv } from "../common/csv.ts";
import { adminClient } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const MEASURES = ["requests", "promptTokens", "cachedTokens", "completionTokens", "cost"];

export async function usageCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { by: { type: "string" }, from: { type: "string" }, to: { type: "string" }, csv: { type: "boolean" }, json: { type: "boolean" } } });
  const q = new URLSearchParams(Object.entries({ by: values.by, from: values.from, to: values.to }).filter((e): e is [string, string] => e[1] !== undefined));
  const r = await adminClient().get<{ by: string[]; data: Record<string, string | number | null>[] }>(`/usage?${q}`);
  const headers = [...r.by, ...MEASURES];
  if (values.json) return printJson(r.data);
  if (values.csv) return void process.stdout.write(toCsv(headers, r.data));
  printTable(headers.map((h) => h.toUpperCase()), r.data.map((row) => headers.map((h) => row[h])));
}
