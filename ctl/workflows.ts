// ctl workflow add|list|show|remove: the catalog's ComfyUI workflows (/api/v1/comfy-workflows).
// A definition file is JSON or YAML: name, model, description, output, inputs, graph (API format).
import fs from "node:fs";
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

interface WorkflowRow {
  name: string;
  model: string;
  description: string;
  output: string;
  inputs: { name: string; kind: string; default?: unknown; min?: number; max?: number; choices?: string[] }[];
  nodes: number;
  graph?: Record<string, unknown>;
}

const USAGE = "usage: llmgw ctl workflow add -f FILE.json|yaml | list | show NAME | remove NAME  [--json]";
const path = (name: string) => `/comfy-workflows/${encodeURIComponent(name)}`;

export async function workflowCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { file: { type: "string", short: "f" }, json: { type: "boolean" } } });
  const api = adminClient();
  const name = positionals[0];
  if (cmd === "add") {
    if (!values.file) throw new CtlError("usage: llmgw ctl workflow add -f FILE.json|yaml [--json]");
    let entry: unknown;
    try {
      const { parse: parseYaml } = await import("yaml"); // loaded on use, as in ctl/models.ts
      entry = parseYaml(fs.readFileSync(values.file, "utf8")); // YAML is a superset of JSON
    } catch (err) {
      throw new CtlError(`${values.file}: ${(err as Error).message}`);
    }
    const r = await api.post<{ name: string; created: boolean }>("/comfy-workflows", entry);
    if (values.json) return printJson(r);
    return void process.stdout.write(`workflow ${r.name} ${r.created ? "added" : "updated"}\n`);
  }
  if (cmd === "list") {
    const { data } = await api.get<{ data: WorkflowRow[] }>("/comfy-workflows");
    if (values.json) return printJson(data);
    return printTable(["WORKFLOW", "MODEL", "OUTPUT", "NODES", "INPUTS"], data.map((w) => [w.name, w.model, w.output, w.nodes, w.inputs.map((i) => `${i.name}:${i.kind}`).join(",")]));
  }
  if (cmd === "show" && name) {
    const w = await api.get<WorkflowRow>(path(name));
    if (values.json) return printJson(w);
    process.stdout.write(`${w.name}  model ${w.model}  output ${w.output}  ${w.nodes} nodes\n${w.description ? `  ${w.description}\n` : ""}`);
    const bounds = (i: WorkflowRow["inputs"][number]) =>
      [i.min !== undefined ? `≥${i.min}` : "", i.max !== undefined ? `≤${i.max}` : "", i.choices ? i.choices.join("|") : ""].filter(Boolean).join(" ");
    return printTable(["INPUT", "KIND", "DEFAULT", "BOUNDS"], w.inputs.map((i) => [i.name, i.kind, i.default === undefined ? undefined : JSON.stringify(i.default), bounds(i) || undefined]));
  }
  if (cmd === "remove" && name) {
    const r = await api.request<{ name: string }>("DELETE", path(name));
    if (values.json) return printJson(r);
    return void process.stdout.write(`workflow ${r.name} removed\n`);
  }
  throw new CtlError(USAGE);
}
