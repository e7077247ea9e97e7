// Limits and budgets of an org, team, project or key: set (PUT /limits/{scope}/{name}, only the
// fields filled in; an emptied field is cleared with null) and clear (DELETE). The admin API keeps
// an org-admin to their org's teams, projects and keys and says so when refused.
import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { listLimits, type Limit } from "./Budgets.tsx";
import { ErrorBox, Section, Table } from "./common.tsx";
import { useLoad } from "./load.ts";

const SCOPES = ["org", "team", "project", "key"] as const;
const FIELDS = ["rpm", "tpm", "concurrent", "monthlyBudget", "monthlyBudgetGpuHours"] as const;
type Field = (typeof FIELDS)[number];
const WHOLE: Field[] = ["rpm", "tpm", "concurrent"];

/** The body of a PUT: each filled field as a number, "-" as null (cleared); an error names a bad field. */
export function limitBodyOf(f: FormData): { body: Partial<Record<Field, number | null>> } | { bad: Field } {
  const body: Partial<Record<Field, number | null>> = {};
  for (const k of FIELDS) {
    const v = String(f.get(k) ?? "").trim();
    if (!v) continue;
    if (v === "-") {
      body[k] = null;
      continue;
    }
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || (WHOLE.includes(k) && !Number.isInteger(n))) return { bad: k };
    body[k] = n;
  }
  return { body };
}

export function LimitsEditor() {
  const t = useT();
  const limits = useLoad(listLimits);
  const [error, setError] = useState<unknown>();
  const [bad, setBad] = useState<string>();
  const path = (scope: string, name: string) => `/limits/${scope}/${encodeURIComponent(name)}`;
  const done = () => {
    setError(undefined);
    limits.reload();
  };
  const set = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const parsed = limitBodyOf(f);
    if ("bad" in parsed) return setBad(`${t.limits[parsed.bad]}: ${t.limits.invalid}`);
    if (Object.keys(parsed.body).length === 0) return setBad(t.limits.nothing);
    setBad(undefined);
    api.put(path(String(f.get("scope")), String(f.get("name") ?? "").trim()), parsed.body).then(done, setError);
  };
  const clear = (l: Limit) => api.del(path(l.scope, l.name)).then(done, setError);
  const show = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v);
  return (
    <Section title={t.limits.title}>
      <ErrorBox error={limits.error ?? error} />
      <Table
        caption={t.limits.title}
        head={[t.col.kind, t.col.name, t.limits.rpm, t.limits.tpm, t.limits.concurrent, t.limits.monthlyBudget, t.limits.monthlyBudgetGpuHours, t.col.actions]}
        rows={(limits.data ?? []).map((l) => [
          l.scope,
          l.name,
          show(l.rpm),
          show(l.tpm),
          show(l.concurrent),
          show(l.monthlyBudget),
          show(l.monthlyBudgetGpuHours),
          <button key="c" type="button" onClick={() => void clear(l)} aria-label={`${t.limits.clear} ${l.scope} ${l.name}`}>
            {t.limits.clear}
          </button>,
        ])}
      />
      <form className="inline" onSubmit={set} aria-label={t.limits.set}>
        <label>
          {t.col.kind}{" "}
          <select name="scope" defaultValue="project">
            {SCOPES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          {t.col.name} <input name="name" required maxLength={200} />
        </label>
        {FIELDS.map((k) => (
          <label key={k}>
            {t.limits[k]} <input name={k} inputMode="decimal" size={8} />
          </label>
        ))}
        <button type="submit">{t.limits.set}</button>
      </form>
      <p className="hint">{t.limits.help}</p>
      {bad ? (
        <p role="alert" className="error">
          {bad}
        </p>
      ) : null}
    </Section>
  );
}
