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
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      project: { type: "string" },
      name: { type: "string" },
      model: { type: "string", multiple: true },
      expires: { type: "string" },
      overlap: { type: "string" },
      json: { type: "boolean" },
    },
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
    const { data } = await admin.get<{ data: { id: string; prefix: string; project: string; name: string | null; revoked: boolean; expiresAt: string | null }[] }>(`/keys${q}`);
    return values.json
      ? printJson(data)
      : printTable(["ID", "KEY", "PROJECT", "NAME", "EXPIRES", "REVOKED"], data.map((k) => [k.id, k.prefix + "…", k.project, k.name, k.expiresAt, k.revoked]));
  }
  const id = positionals[0];
  if (cmd === "revoke" && id) {
    const k = await admin.post<{ id: string; prefix: string }>(`/keys/${encodeURIComponent(id)}/revoke`, {});
    return values.json ? printJson(k) : void process.stdout.write(`key ${k.prefix}… revoked on every gateway\n`);
  }
  if (cmd === "rotate" && id) {
    const overlapSeconds = values.overlap === undefined ? undefined : Number(values.overlap);
    const k = await admin.post<{ id: string; key: string; prefix: string; old: { expiresAt: string } }>(`/keys/${encodeURIComponent(id)}/rotate`, { overlapSeconds });
    if (values.json) return printJson(k);
    process.stdout.write(`${k.key}\n`);
    process.stderr.write(`new key ${k.prefix}… (id ${k.id}): shown once, keep it now; the old key works until ${k.old.expiresAt}\n`);
    return;
  }
  throw new CtlError("usage: llmgw ctl keys create … | list [--project P] | revoke ID | rotate ID [--overlap SECONDS]");
}
