// ctl limits set SCOPE NAME [--rpm N] [--tpm N] [--concurrent N] [--budget AMOUNT] [--budget-gpu-hours N] [--tools PATTERNS] | clear | list
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const USAGE = "usage: llmgw ctl limits list | set org|team|project|key NAME [--rpm N] [--tpm N] [--concurrent N] [--budget AMOUNT] [--budget-gpu-hours N] [--tools 'jira.*,files.read'] ('none' clears one) | clear SCOPE NAME";

/** A flag's number, or null for "none" (clears that limit). */
const num = (v: string | undefined) => (v === undefined ? undefined : v === "none" ? null : Number(v));
/** MCP tool grants: comma-separated and/or repeated; "none" grants none. */
const tools = (v: string[] | undefined) => (v === undefined ? undefined : v.join(",") === "none" ? null : v.flatMap((x) => x.split(",")).map((x) => x.trim()).filter(Boolean));

export async function limitsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { rpm: { type: "string" }, tpm: { type: "string" }, concurrent: { type: "string" }, budget: { type: "string" }, "budget-gpu-hours": { type: "string" }, tools: { type: "string", multiple: true }, json: { type: "boolean" } },
  });
  const admin = adminClient();
  const [scope, name] = positionals;
  const path = () => `/limits/${encodeURIComponent(scope!)}/${encodeURIComponent(name!)}`;
  if (cmd === "list" || cmd === undefined) {
    type Row = { scope: string; name: string; rpm: number | null; tpm: number | null; concurrent: number | null; monthlyBudget: number | null; monthlyBudgetGpuHours: number | null; tools?: string[] };
    const { data } = await admin.get<{ data: Row[] }>("/limits");
    if (values.json) return printJson(data);
    const headers = ["SCOPE", "NAME", "RPM", "TPM", "CONCURRENT", "MONTHLY BUDGET", "GPU-HOURS/MONTH", "TOOLS"];
    return printTable(headers, data.map((l) => [l.scope, l.name, l.rpm, l.tpm, l.concurrent, l.monthlyBudget, l.monthlyBudgetGpuHours, (l.tools ?? []).join(",")]));
  }
  if (cmd === "set" && scope && name) {
    const body = { rpm: num(values.rpm), tpm: num(values.tpm), concurrent: num(values.concurrent), monthlyBudget: num(values.budget), monthlyBudgetGpuHours: num(values["budget-gpu-hours"]), tools: tools(values.tools) };
    const l = await admin.request("PUT", path(), Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
    return values.json ? printJson(l) : void process.stdout.write(`limits set for ${scope} ${name}\n`);
  }
  if (cmd === "clear" && scope && name) {
    await admin.request("DELETE", path());
    return values.json ? printJson({ deleted: true }) : void process.stdout.write(`limits cleared for ${scope} ${name}\n`);
  }
  throw new CtlError(USAGE);
}
