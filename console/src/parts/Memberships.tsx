// People and their memberships (a role at the platform, an org, a team or a project): list, add,
// remove. platform-admin sees everyone; org-admin sees and grants within their orgs, the API
// deciding which (gateway/admin-api/people.ts), so the platform scope is offered to platform-admin only.
import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { rolesOf, type Me, type Role } from "../roles.ts";
import { ErrorBox, Section, Table } from "./common.tsx";
import { useLoad } from "./load.ts";

interface Person {
  id: string;
  name: string;
  email: string | null;
  disabled: boolean;
  memberships: number;
}
interface Grant {
  id: string;
  scope: "platform" | "org" | "team" | "project";
  name: string | null;
  role: Role;
  source?: string;
}

/** Which roles each scope can hold (ROLE_SCOPES in gateway/admin-api/roles.ts). */
const ROLES_AT: Record<Grant["scope"], Role[]> = {
  platform: ["platform-admin", "operator", "viewer"],
  org: ["org-admin", "member", "viewer"],
  team: ["member", "viewer"],
  project: ["member", "viewer"],
};

export function Memberships({ me }: { me: Me | null }) {
  const t = useT();
  const scopes = (Object.keys(ROLES_AT) as Grant["scope"][]).filter((s) => s !== "platform" || (me !== null && rolesOf(me).has("platform-admin")));
  const people = useLoad(() => api.get<{ data: Person[] }>("/people").then((b) => b.data));
  const [personId, setPersonId] = useState("");
  const [scope, setScope] = useState<Grant["scope"]>("project");
  const grants = useLoad(() => (personId ? api.get<{ memberships: Grant[] }>(`/people/${encodeURIComponent(personId)}`).then((p) => p.memberships) : Promise.resolve([])), [personId]);
  const [error, setError] = useState<unknown>();
  const done = () => {
    setError(undefined);
    grants.reload();
    people.reload();
  };
  const add = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const name = String(f.get("name") ?? "").trim();
    api.post(`/people/${encodeURIComponent(personId)}/memberships`, { scope, role: String(f.get("role")), ...(scope === "platform" ? {} : { name }) }).then(done, setError);
  };
  const remove = (g: Grant) => api.del(`/people/${encodeURIComponent(personId)}/memberships/${encodeURIComponent(g.id)}`).then(done, setError);
  const who = (p: Person) => (p.email ? `${p.name} <${p.email}>` : p.name);
  return (
    <Section title={t.people.title}>
      <ErrorBox error={people.error ?? grants.error ?? error} />
      <label>
        {t.people.person}{" "}
        <select value={personId} onChange={(e) => setPersonId(e.target.value)}>
          <option value="">{t.people.choose}</option>
          {(people.data ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {who(p)}
            </option>
          ))}
        </select>
      </label>
      {personId ? (
        <>
          <Table
            caption={t.people.memberships}
            head={[t.people.scope, t.col.name, t.people.role, t.people.source, t.col.actions]}
            empty={t.people.none}
            rows={(grants.data ?? []).map((g) => [
              g.scope,
              g.name ?? "—",
              g.role,
              g.source ?? "manual",
              <button key="r" type="button" onClick={() => void remove(g)} aria-label={`${t.people.remove} ${g.role} ${g.scope} ${g.name ?? ""}`.trim()}>
                {t.people.remove}
              </button>,
            ])}
          />
          <form className="inline" onSubmit={add} aria-label={t.people.add}>
            <label>
              {t.people.scope}{" "}
              <select value={scope} onChange={(e) => setScope(e.target.value as Grant["scope"])}>
                {scopes.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>
            {scope === "platform" ? null : (
              <label>
                {t.people.scopeName} <input name="name" required maxLength={200} />
              </label>
            )}
            <label>
              {t.people.role}{" "}
              <select name="role">
                {ROLES_AT[scope].map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </label>
            <button type="submit">{t.people.add}</button>
          </form>
        </>
      ) : null}
    </Section>
  );
}
