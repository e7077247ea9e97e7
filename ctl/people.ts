// ctl people … / memberships … / group-mappings …: who may do what (platform-admin's routes).
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

type Person = { id: string; name: string; email: string | null; disabled: boolean; memberships?: number; keys?: number };
type Grant = { id: string; scope: string; name: string | null; role: string; source?: string; provider?: string | null; group?: string };
const enc = encodeURIComponent;
const where = (g: Grant) => (g.scope === "platform" ? "platform" : `${g.scope} ${g.name}`);

const PEOPLE_USAGE = "usage: llmgw ctl people list | show ID | create --name NAME [--email E] | disable ID | enable ID | delete ID [--json]";

export async function peopleCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { name: { type: "string" }, email: { type: "string" }, json: { type: "boolean" } } });
  const admin = adminClient();
  const id = positionals[0];
  if (cmd === "list" || cmd === undefined) {
    const { data } = await admin.get<{ data: Person[] }>("/people");
    return values.json ? printJson(data) : printTable(["ID", "NAME", "EMAIL", "DISABLED", "MEMBERSHIPS", "KEYS"], data.map((p) => [p.id, p.name, p.email, p.disabled, p.memberships, p.keys]));
  }
  if (cmd === "create" && values.name !== undefined) {
    const p = await admin.post<Person>("/people", { name: values.name, email: values.email });
    return values.json ? printJson(p) : void process.stdout.write(`person ${p.name} created: ${p.id}\n`);
  }
  if (cmd === "show" && id) {
    const p = await admin.get<Person & { memberships: Grant[]; identities: { provider: string; subject: string }[] }>(`/people/${enc(id)}`);
    if (values.json) return printJson(p);
    process.stdout.write(`${p.name} <${p.email ?? "-"}> ${p.disabled ? "DISABLED" : "enabled"}\n`);
    printTable(["MEMBERSHIP", "ROLE", "AT", "SOURCE"], p.memberships.map((m) => [m.id, m.role, where(m), m.source]));
    return;
  }
  if ((cmd === "disable" || cmd === "enable") && id) {
    const p = await admin.post<Person>(`/people/${enc(id)}/${cmd}`, {});
    return values.json ? printJson(p) : void process.stdout.write(`person ${p.name} ${p.disabled ? "disabled: sessions ended, keys stopped" : "enabled"}\n`);
  }
  if (cmd === "delete" && id) {
    const r = await admin.request("DELETE", `/people/${enc(id)}`);
    return values.json ? printJson(r) : void process.stdout.write(`person ${id} deleted\n`);
  }
  throw new CtlError(PEOPLE_USAGE);
}

const GRANT_USAGE = "--role platform-admin|operator|org-admin|member|viewer --scope platform|org|team|project [--name ORG|ORG/TEAM|PROJECT]";

export async function membershipsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { role: { type: "string" }, scope: { type: "string" }, name: { type: "string" }, json: { type: "boolean" } } });
  const admin = adminClient();
  const [person, membership] = positionals;
  if (cmd === "list" && person) {
    const { memberships } = await admin.get<{ memberships: Grant[] }>(`/people/${enc(person)}`);
    return values.json ? printJson(memberships) : printTable(["ID", "ROLE", "AT", "SOURCE"], memberships.map((m) => [m.id, m.role, where(m), m.source]));
  }
  if (cmd === "add" && person) {
    const m = await admin.post<Grant>(`/people/${enc(person)}/memberships`, { role: values.role, scope: values.scope, name: values.name });
    return values.json ? printJson(m) : void process.stdout.write(`${m.role} at ${where(m)}: membership ${m.id}\n`);
  }
  if (cmd === "remove" && person && membership) {
    const r = await admin.request("DELETE", `/people/${enc(person)}/memberships/${enc(membership)}`);
    return values.json ? printJson(r) : void process.stdout.write(`membership ${membership} removed\n`);
  }
  throw new CtlError(`usage: llmgw ctl memberships list PERSON | add PERSON ${GRANT_USAGE} | remove PERSON MEMBERSHIP [--json]`);
}

export async function groupMappingsCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { group: { type: "string" }, provider: { type: "string" }, role: { type: "string" }, scope: { type: "string" }, name: { type: "string" }, json: { type: "boolean" } },
  });
  const admin = adminClient();
  const id = positionals[0];
  if (cmd === "list" || cmd === undefined) {
    const { data } = await admin.get<{ data: Grant[] }>("/group-mappings");
    return values.json ? printJson(data) : printTable(["ID", "PROVIDER", "GROUP", "ROLE", "AT"], data.map((m) => [m.id, m.provider ?? "(any)", m.group, m.role, where(m)]));
  }
  if (cmd === "show" && id) {
    const m = await admin.get<Grant>(`/group-mappings/${enc(id)}`);
    return values.json ? printJson(m) : void process.stdout.write(`${m.provider ?? "(any provider)"} group ${m.group} → ${m.role} at ${where(m)}\n`);
  }
  const rule = { group: values.group, provider: values.provider, role: values.role, scope: values.scope, name: values.name };
  if (cmd === "set" && id) {
    const m = await admin.request<Grant>("PUT", `/group-mappings/${enc(id)}`, rule);
    return values.json ? printJson(m) : void process.stdout.write(`mapping ${m.id}: group ${m.group} → ${m.role} at ${where(m)}\n`);
  }
  if (cmd === "create") {
    const m = await admin.post<Grant>("/group-mappings", rule);
    return values.json ? printJson(m) : void process.stdout.write(`group ${m.group} → ${m.role} at ${where(m)}: mapping ${m.id}\n`);
  }
  if (cmd === "delete" && id) {
    const r = await admin.request("DELETE", `/group-mappings/${enc(id)}`);
    return values.json ? printJson(r) : void process.stdout.write(`group mapping ${id} deleted\n`);
  }
  throw new CtlError(`usage: llmgw ctl group-mappings list | show ID | create --group G [--provider P] ${GRANT_USAGE} | set ID (as create) | delete ID [--json]`);
}
