// ctl projects … / ctl keys …: projects and their API keys.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

export async function projectsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: "boolean" } } });
  const admin = adminClient();
  if (cmd === "create" && positionals[0]) {
    const p = await admin.post<{ id: string; name: string; created: boolean }>("/projects", { name: positionals[0] });
    return values.json ? printJson(p) : void process.stdout.write(`project ${p.name} ${p.created ? "created" : "already exists"}\n`);
  }
  if (cmd === "list" || cmd === undefined) {
    const { data } = await admin.get<{ data: { name: string; keys: number }[] }>("/projects");
    return values.json ? printJson(data) : printTable(["PROJECT", "KEYS"], data.map((p) => [p.name, p.keys]));
  }
  throw new CtlError("usage: llmgw ctl projects create NAME | list [--json]");
}

export async function keysCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { project: { type: "string" }, name: { type: "string" }, model: { type: "string", multiple: true }, expires: { type: "string" }, json: { type: "boolean" } },
  });
  const admin = adminClient();
  if (cmd === "create") {
    if (!values.project) throw new CtlError("usage: llmgw ctl keys create --project P [--name N] [--model PATTERN]… [--expires ISO-TIME] [--json]");
    const k = await admin.post<{ id: string; key: string; prefix: string; project: string }>("/keys", {
      project: values.project,
      name: values.name,
      models: values.model,
      expiresAt: values.expires,
    });
    if (values.json) return printJson(k);
    process.stdout.write(`${k.key}\n`);
    process.stderr.write(`key ${k.prefix}… for project ${k.project}: shown once, keep it now\n`);
    return;
  }
  if (cmd === "list") {
    const q = values.project ? `?project=${encodeURIComponent(values.project)}` : "";
    const { data } = await admin.get<{ data: { prefix: string; project: string; name: string | null; revoked: boolean; expiresAt: string | null }[] }>(`/keys${q}`);
    return values.json ? printJson(data) : printTable(["KEY", "PROJECT", "NAME", "EXPIRES", "REVOKED"], data.map((k) => [k.prefix + "…", k.project, k.name, k.expiresAt, k.revoked]));
  }
  throw new CtlError("usage: llmgw ctl keys create|list …");
}
