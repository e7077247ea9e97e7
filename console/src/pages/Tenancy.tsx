// Tenancy: organizations, teams, projects and their API keys. Roles that may write create projects
// and keys (a key shown once), revoke and rotate keys, and set limits and budgets; a platform-admin
// also edits people's memberships. The admin API limits an org-admin to their org.
import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table, when } from "../parts/common.tsx";
import { LimitsEditor } from "../parts/LimitsEditor.tsx";
import { useLoad } from "../parts/load.ts";
import { Memberships } from "../parts/Memberships.tsx";
import { ShownOnce } from "../parts/ShownOnce.tsx";
import { can } from "../roles.ts";
import { useMe } from "../session.ts";

interface Org {
  name: string;
  teams: number;
  createdAt: string;
}
interface Team {
  name: string;
  projects: number;
}
interface Project {
  name: string;
  team: string;
  keys: number;
}
interface Key {
  id: string;
  prefix: string;
  name: string | null;
  project: string;
  models: string[];
  band: string;
  expiresAt: string | null;
  revoked: boolean;
}

const data = <T,>(path: string) => api.get<{ data: T[] }>(path).then((b) => b.data);

export function Tenancy() {
  const t = useT();
  const me = useMe();
  const write = can(me, "tenancy.write");
  const orgs = useLoad(() => data<Org>("/orgs"));
  const teams = useLoad(() => data<Team>("/teams"));
  const projects = useLoad(() => data<Project>("/projects"));
  const keys = useLoad(() => data<Key>("/keys"));
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<string>();

  const newProject = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const team = String(f.get("team") ?? "").trim();
    api.post("/projects", { name: String(f.get("name") ?? "").trim(), ...(team ? { team } : {}) }).then(() => {
      setError(undefined);
      projects.reload();
    }, setError);
  };
  const newKey = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const models = String(f.get("models") ?? "")
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean);
    const name = String(f.get("name") ?? "").trim();
    api.post<{ key: string }>("/keys", { project: String(f.get("project") ?? ""), ...(name ? { name } : {}), ...(models.length ? { models } : {}) }).then((k) => {
      setError(undefined);
      setSecret(k.key);
      keys.reload();
    }, setError);
  };
  const rotate = (k: Key) =>
    api.post<{ key: string }>(`/keys/${encodeURIComponent(k.id)}/rotate`, { overlapSeconds: 3600 }).then((r) => {
      setError(undefined);
      setSecret(r.key);
      keys.reload();
    }, setError);
  const revoke = (k: Key) =>
    api.post(`/keys/${encodeURIComponent(k.id)}/revoke`).then(() => {
      setError(undefined);
      keys.reload();
    }, setError);

  return (
    <>
      <h1>{t.tenancy.title}</h1>
      <ErrorBox error={error} />
      <Section title={t.tenancy.orgs}>
        <ErrorBox error={orgs.error} />
        <Table caption={t.tenancy.orgs} head={[t.col.name, t.tenancy.teams, t.col.created]} rows={(orgs.data ?? []).map((o) => [o.name, o.teams, when(o.createdAt)])} />
      </Section>
      <Section title={t.tenancy.teams}>
        <ErrorBox error={teams.error} />
        <Table caption={t.tenancy.teams} head={[t.col.name, t.tenancy.projects]} rows={(teams.data ?? []).map((x) => [x.name, x.projects])} />
      </Section>
      <Section title={t.tenancy.projects}>
        <ErrorBox error={projects.error} />
        <Table caption={t.tenancy.projects} head={[t.col.name, t.col.team, t.col.keys]} rows={(projects.data ?? []).map((p) => [p.name, p.team, p.keys])} />
        {write ? (
          <form className="inline" onSubmit={newProject} aria-label={t.tenancy.newProject}>
            <label>
              {t.col.name} <input name="name" required pattern="[A-Za-z0-9._\-]+" />
            </label>
            <label>
              {t.tenancy.team} <input name="team" placeholder="default/default" />
            </label>
            <button type="submit">{t.tenancy.newProject}</button>
          </form>
        ) : null}
      </Section>
      <Section title={t.tenancy.keys}>
        <ErrorBox error={keys.error} />
        <Table
          caption={t.tenancy.keys}
          head={[t.col.prefix, t.col.name, t.col.project, t.col.models, t.col.expires, t.col.revoked, ...(write ? [t.col.actions] : [])]}
          rows={(keys.data ?? []).map((k) => [
            <code key="p">{k.prefix}</code>,
            k.name ?? "—",
            k.project,
            k.models.join(", ") || "*",
            when(k.expiresAt),
            k.revoked ? "✓" : "",
            ...(write
              ? [
                  k.revoked ? (
                    ""
                  ) : (
                    <span className="actions" key="a">
                      <button type="button" onClick={() => void rotate(k)} aria-label={`${t.tenancy.rotate} ${k.prefix}`} title={t.tenancy.rotateHelp}>
                        {t.tenancy.rotate}
                      </button>
                      <button type="button" onClick={() => void revoke(k)} aria-label={`${t.tenancy.revoke} ${k.prefix}`}>
                        {t.tenancy.revoke}
                      </button>
                    </span>
                  ),
                ]
              : []),
          ])}
        />
        {write ? (
          <form className="inline" onSubmit={newKey} aria-label={t.tenancy.newKey}>
            <label>
              {t.tenancy.project}{" "}
              <select name="project" required>
                {(projects.data ?? []).map((p) => (
                  <option key={p.name}>{p.name}</option>
                ))}
              </select>
            </label>
            <label>
              {t.tenancy.keyName} <input name="name" maxLength={128} />
            </label>
            <label>
              {t.tenancy.models} <input name="models" />
            </label>
            <button type="submit">{t.tenancy.newKey}</button>
          </form>
        ) : null}
        {secret ? <ShownOnce secret={secret} /> : null}
      </Section>
      {can(me, "limits.write") ? <LimitsEditor /> : null}
      {can(me, "people.write") ? <Memberships me={me} /> : null}
    </>
  );
}
