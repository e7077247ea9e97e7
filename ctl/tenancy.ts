// ctl orgs … / teams … / projects … / keys …: the tenancy tree (org → team → project) and API keys.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { limitsCommand } from "./limits.ts";
import { sessionClient } from "./session.ts";
import { printJson, printTable } from "./output.ts";

type Created = { id: string; name: string; created: boolean };
const said = (what: string, c: Created) => void process.stdout.write(`${what} ${c.name} ${c.created ? "created" : "already exists"}\n`);

export async function orgsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: "boolean" } } });
  if (cmd === "create" && positionals[0]) {
    const o = await adminClient().post<Created>("/orgs", { name: positionals[0] });
    return values.json ? printJson(o) : said("org", o);
  }
  if (cmd === "list" || cmd === undefined) {
    const { data } = await adminClient().get<{ data: { name: string; teams: number }[] }>("/orgs");
    return values.json ? printJson(data) : printTable(["ORG", "TEAMS"], data.map((o) => [o.name, o.teams]));
  }
  throw new CtlError("usage: llmgw ctl orgs create NAME | list [--json]");
}

export async function teamsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json: { type: "boolean" } } });
  const [org, name] = (positionals[0] ?? "").split("/", 2);
  if (cmd === "create" && org && name) {
    const t = await adminClient().post<Created>("/teams", { org, name });
    return values.json ? printJson(t) : said("team", t);
  }
  if (cmd === "list" || cmd === undefined) {
    const { data } = await adminClient().get<{ data: { name: string; projects: number }[] }>("/teams");
    return values.json ? printJson(data) : printTable(["TEAM", "PROJECTS"], data.map((t) => [t.name, t.projects]));
  }
  throw new CtlError("usage: llmgw ctl teams create ORG/TEAM | list [--json]");
}

export async function projectsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { team: { type: "string" }, json: { type: "boolean" }, "no-store": { type: "boolean" }, store: { type: "boolean" } } });
  const admin = adminClient();
  if (cmd === "set" && positionals[0] && (values["no-store"] || values.store) && !(values["no-store"] && values.store)) {
    const out = await admin.request<{ name: string; noStore: boolean }>("PATCH", `/projects/${encodeURIComponent(positionals[0])}/settings`, { noStore: values["no-store"] === true });
    return values.json ? printJson(out) : console.log(`project ${out.name}: ${out.noStore ? "no_store (keeps no /v1/responses answers)" : "stores /v1/responses answers"}`);
  }
  if (cmd === "create" && positionals[0]) {
    const p = await admin.post<Created>("/projects", { name: positionals[0], team: values.team });
    return values.json ? printJson(p) : said("project", p);
  }
  if (cmd === "list" || cmd === undefined) {
    const { data } = await admin.get<{ data: { name: string; team: string; keys: number; noStore: boolean }[] }>("/projects");
    return values.json ? printJson(data) : printTable(["PROJECT", "TEAM", "KEYS", "STORE"], data.map((p) => [p.name, p.team, p.keys, p.noStore ? "no_store" : "yes"]));
  }
  throw new CtlError("usage: llmgw ctl projects create NAME [--team ORG/TEAM] | set NAME --no-store|--store | list [--json]");
}

export async function keysCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  // A key's own limits: the same as `limits set|clear key ID …`.
  if (cmd === "limits") return limitsCommand(rest[0] === "clear" ? ["clear", "key", ...rest.slice(1)] : ["set", "key", ...rest]);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      project: { type: "string" },
      name: { type: "string" },
      model: { type: "string", multiple: true },
      band: { type: "string" },
      expires: { type: "string" },
      overlap: { type: "string" },
      mine: { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  if (values.mine) return myKeys(cmd, positionals[0], values);
  const admin = adminClient();
  if (cmd === "create") {
    if (!values.project) throw new CtlError("usage: llmgw ctl keys create --project P [--name N] [--model PATTERN]… [--band interactive|batch|bulk] [--expires ISO-TIME] [--json]");
    const k = await admin.post<{ id: string; key: string; prefix: string; project: string }>("/keys", {
      project: values.project,
      name: values.name,
      models: values.model,
      band: values.band,
      expiresAt: values.expires,
    });
    if (values.json) return printJson(k);
    process.stdout.write(`${k.key}\n`);
    process.stderr.write(`key ${k.prefix}… for project ${k.project}: shown once, keep it now\n`);
    return;
  }
  if (cmd === "list") {
    const q = values.project ? `?project=${encodeURIComponent(values.project)}` : "";
    const { data } = await admin.get<{ data: { id: string; prefix: string; project: string; name: string | null; band: string; revoked: boolean; expiresAt: string | null }[] }>(`/keys${q}`);
    return values.json
      ? printJson(data)
      : printTable(["ID", "KEY", "PROJECT", "NAME", "BAND", "EXPIRES", "REVOKED"], data.map((k) => [k.id, k.prefix + "…", k.project, k.name, k.band, k.expiresAt, k.revoked]));
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
  throw new CtlError("usage: llmgw ctl keys create … | list [--project P] | revoke ID | rotate ID [--overlap SECONDS] | limits ID [--rpm N] [--tpm N] [--concurrent N] [--budget X] | limits clear ID");
}

type KeyFlags = { project?: string; name?: string; model?: string[]; band?: string; expires?: string; json?: boolean };
type MyKey = { id: string; key?: string; prefix: string; project: string; name: string | null; band: string; expiresAt: string | null; revoked: boolean };

/** `keys … --mine`: the signed-in person's own keys, through /me/keys with their session. */
async function myKeys(cmd: string | undefined, id: string | undefined, values: KeyFlags): Promise<void> {
  const me = sessionClient();
  if (cmd === "create" && values.project) {
    const k = await me.post<MyKey>("/me/keys", { project: values.project, name: values.name, models: values.model, band: values.band, expiresAt: values.expires });
    if (values.json) return printJson(k);
    process.stdout.write(`${k.key}\n`);
    process.stderr.write(`your key ${k.prefix}… for project ${k.project}: shown once, keep it now; it stops if you leave the project\n`);
    return;
  }
  if (cmd === "list") {
    const { data } = await me.get<{ data: MyKey[] }>("/me/keys");
    return values.json ? printJson(data) : printTable(["ID", "KEY", "PROJECT", "NAME", "BAND", "EXPIRES", "REVOKED"], data.map((k) => [k.id, k.prefix + "…", k.project, k.name, k.band, k.expiresAt, k.revoked]));
  }
  if (cmd === "revoke" && id) {
    const k = await me.request<MyKey>("DELETE", `/me/keys/${encodeURIComponent(id)}`);
    return values.json ? printJson(k) : void process.stdout.write(`your key ${k.prefix}… revoked on every gateway\n`);
  }
  throw new CtlError("usage: llmgw ctl keys create --mine --project P [--name N] [--model PATTERN]… [--band B] [--expires ISO-TIME] | list --mine | revoke --mine ID [--json]");
}
