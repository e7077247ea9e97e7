// Guardrails: the policies (GET /guard/policies) with their rules, and the blocks and flags of the
// last day (GET /guard/events, never the text). Adding a policy (a new version when the name
// exists) and removing one are for platform-admin, as are the routes.
import { useState } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table, when } from "../parts/common.tsx";
import { JsonForm } from "../parts/JsonForm.tsx";
import { useLoad } from "../parts/load.ts";

interface Policy {
  name: string;
  version: number;
  scope: string;
  policy: { input?: { name: string; detector: string; action?: string }[]; output?: { name: string; detector: string; action?: string }[] };
  updatedAt: string;
}
interface GuardEvent {
  id: string;
  at: string;
  policy?: string;
  rule?: string;
  action?: string;
  model?: string;
  direction?: string;
}

const EXAMPLE = '{"name": "no-secrets", "scope": "default", "input": [{"name": "keys", "detector": "secrets", "action": "block"}]}';
const rules = (p: Policy) => [...(p.policy.input ?? []).map((r) => `in: ${r.name} (${r.detector}${r.action ? ` → ${r.action}` : ""})`), ...(p.policy.output ?? []).map((r) => `out: ${r.name} (${r.detector}${r.action ? ` → ${r.action}` : ""})`)].join("; ");

export function Guardrails() {
  const t = useT();
  const policies = useLoad(() => api.get<{ data: Policy[] }>("/guard/policies").then((b) => b.data));
  const events = useLoad(() => api.get<{ data: GuardEvent[] }>("/guard/events?limit=50").then((b) => b.data), [], 10_000);
  const [error, setError] = useState<unknown>();
  const done = () => {
    setError(undefined);
    policies.reload();
  };
  const add = (body: unknown) => void api.post("/guard/policies", body).then(done, setError);
  const remove = (p: Policy) => {
    if (confirm(`${t.admin.remove} ${p.name}?`)) void api.del(`/guard/policies/${encodeURIComponent(p.name)}`).then(done, setError);
  };
  return (
    <>
      <h1>{t.guard.title}</h1>
      <Section title={t.guard.policies}>
        <ErrorBox error={policies.error ?? error} />
        <Table
          caption={t.guard.policies}
          head={[t.col.name, t.col.version, t.guard.scope, t.guard.rules, t.guard.updated, t.col.actions]}
          rows={(policies.data ?? []).map((p) => [
            p.name,
            p.version,
            p.scope,
            rules(p),
            when(p.updatedAt),
            <button key="r" type="button" onClick={() => remove(p)} aria-label={`${t.admin.remove} ${p.name}`}>
              {t.admin.remove}
            </button>,
          ])}
        />
        <JsonForm label={t.guard.document} submit={t.guard.add} example={EXAMPLE} onSend={add} />
      </Section>
      <Section title={t.guard.events}>
        <ErrorBox error={events.error} />
        <Table
          caption={t.guard.events}
          head={[t.col.when, t.guard.policy, t.guard.rule, t.guard.action, t.col.models]}
          empty={t.overview.none}
          rows={(events.data ?? []).map((e) => [when(e.at), e.policy ?? "—", e.rule ?? "—", e.action ?? "—", e.model ?? "—"])}
        />
      </Section>
    </>
  );
}
