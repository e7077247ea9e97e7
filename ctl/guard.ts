// ctl guard policy add -f policy.yaml | show NAME | list | remove NAME; guard explain --key K
// --model M; guard events [--since 24h|ISO]; guard judge check MODEL (or --model M) --text T [--timeout S]. Talks to the admin API, which checks every field.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const USAGE = "usage: llmgw ctl guard policy add -f FILE.yaml|json | policy show NAME | policy list | policy remove NAME | explain --key K --model M | events [--since 24h|ISO] [--limit N] | judge check MODEL --text T [--timeout S]  [--json]";

type PolicyRow = { name: string; version: number; scope: string; policy: { input?: unknown[]; output?: unknown[] }; updatedAt: string };
type EventRow = { at: string; keyId: string | null; projectId: string | null; model: string; policy: string; rule: string; action: string; direction: string };

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `24h` or an ISO time, as an ISO time. */
function sinceOf(v: string): string {
  const m = /^(\d+)([smhd])$/.exec(v);
  if (m) return new Date(Date.now() - Number(m[1]) * UNIT_MS[m[2]!]!).toISOString();
  if (Number.isNaN(Date.parse(v))) throw new CtlError(`--since: '${v}' is neither a duration (24h, 30m, 7d) nor an ISO time`);
  return new Date(v).toISOString();
}

export async function guardCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { file: { type: "string", short: "f" }, key: { type: "string" }, model: { type: "string" }, since: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" }, text: { type: "string" }, timeout: { type: "string" } },
  });
  const api = adminClient();
  const [cmd, sub, name] = positionals;
  const out = (v: unknown, text: string) => (values.json ? printJson(v) : void process.stdout.write(text + "\n"));
  if (cmd === "policy" && sub === "add") {
    if (!values.file) throw new CtlError("usage: llmgw ctl guard policy add -f FILE.yaml|json [--json]");
    let doc: unknown;
    try {
      const { parse: parseYaml } = await import("yaml"); // YAML is a superset of JSON
      doc = parseYaml(fs.readFileSync(values.file, "utf8"), { uniqueKeys: true });
    } catch (err) {
      throw new CtlError(`${values.file}: ${(err as Error).message.split("\n")[0]}`);
    }
    const r = await api.post<PolicyRow>("/guard/policies", doc);
    return out(r, `guard policy ${r.name} version ${r.version} (${r.scope})`);
  }
  if (cmd === "policy" && sub === "show" && name) {
    const r = await api.get<PolicyRow>(`/guard/policies/${encodeURIComponent(name)}`);
    return out(r, JSON.stringify(r, null, 2));
  }
  if (cmd === "policy" && sub === "list") {
    const { data } = await api.get<{ data: PolicyRow[] }>("/guard/policies");
    if (values.json) return printJson(data);
    return printTable(["NAME", "VERSION", "SCOPE", "INPUT RULES", "OUTPUT RULES", "UPDATED"], data.map((p) => [p.name, p.version, p.scope, p.policy.input?.length ?? 0, p.policy.output?.length ?? 0, p.updatedAt]));
  }
  if (cmd === "policy" && sub === "remove" && name) {
    await api.request("DELETE", `/guard/policies/${encodeURIComponent(name)}`);
    return out({ deleted: true }, `guard policy ${name} removed`);
  }
  if (cmd === "explain") {
    if (!values.key || !values.model) throw new CtlError("usage: llmgw ctl guard explain --key K --model M [--json]");
    const r = await api.get<{ merged: { policies: string[]; input: { name: string; detector: string; action: string; from: string }[]; output: { name: string; detector: string; action: string; from: string }[] } | null }>(
      `/guard/explain?key=${encodeURIComponent(values.key)}&model=${encodeURIComponent(values.model)}`,
    );
    if (values.json) return printJson(r);
    if (!r.merged) return void process.stdout.write("no guard policy applies\n");
    process.stdout.write(`policies: ${r.merged.policies.join(", ")}\n`);
    const rows = (["input", "output"] as const).flatMap((d) => r.merged![d].map((x) => [d, x.name, x.detector, x.action, x.from]));
    return printTable(["DIRECTION", "RULE", "DETECTOR", "ACTION", "FROM"], rows);
  }
  if (cmd === "events") {
    const q = new URLSearchParams();
    if (values.since) q.set("since", sinceOf(values.since));
    if (values.limit) q.set("limit", values.limit);
    const { data } = await api.get<{ data: EventRow[] }>(`/guard/events${q.size ? `?${q}` : ""}`);
    if (values.json) return printJson(data);
    return printTable(["AT", "KEY", "PROJECT", "MODEL", "POLICY", "RULE", "ACTION", "DIRECTION"], data.map((e) => [e.at, e.keyId, e.projectId, e.model, e.policy, e.rule, e.action, e.direction]));
  }
  if (cmd === "judge" && sub === "check") {
    // The model by name (`judge check MODEL`, as the issue writes it) or by --model; not both, differing.
    if (name && values.model && name !== values.model) throw new CtlError(`judge check: the model is '${name}' or '${values.model}', not both`);
    values.model ??= name;
    if (!values.model || !values.text) throw new CtlError("usage: llmgw ctl guard judge check MODEL --text T [--timeout SECONDS] [--json]");
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    if (timeout !== undefined && !(timeout > 0)) throw new CtlError(`--timeout: '${values.timeout}' is not a number of seconds`);
    const r = await api.post<{ safe: boolean | null; categories: string[]; ms: number; budgetMs: number; fits: boolean; error?: string }>("/guard/judge/check", { model: values.model, text: values.text, timeout });
    const verdict = r.safe === null ? `no verdict (${r.error ?? "failed"})` : r.safe ? "safe" : `unsafe ${r.categories.join(",")}`.trim();
    out(r, `${verdict}; ${r.ms} ms of a ${r.budgetMs} ms budget: ${r.fits ? "fits" : "does NOT fit"}`);
    // Exit 1 when it does not fit, so a script can check a judge before a policy names it.
    if (!r.fits) throw new CtlError(`the judge '${values.model}' does not fit a ${r.budgetMs} ms budget`);
    return;
  }
  throw new CtlError(USAGE);
}
