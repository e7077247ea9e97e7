// A person's own keys (/api/v1/me/keys): list, create (shown once), revoke.
import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Table, when } from "../parts/common.tsx";
import { useLoad } from "../parts/load.ts";
import { keepForPlayground, ShownOnce } from "../parts/ShownOnce.tsx";
import { can, type Me } from "../roles.ts";
import { useMe } from "../session.ts";

export interface MyKey {
  id: string;
  prefix: string;
  name: string | null;
  project?: string;
  models?: string[];
  expiresAt: string | null;
  revoked?: boolean;
  revokedAt?: string | null;
}

export const myKeys = () => api.get<{ data: MyKey[] } | MyKey[]>("/me/keys").then((b) => (Array.isArray(b) ? b : b.data));
export const createMyKey = (project: string, name: string, expiresAt?: Date) =>
  api.post<{ id: string; key: string }>("/me/keys", { project, ...(name ? { name } : {}), ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}) });

/** Projects the person may make keys in as far as the console knows: those their memberships name, and every one their role may list. */
export async function myProjects(me: Me | null): Promise<string[]> {
  const named = (me?.memberships ?? []).filter((m) => m.scope === "project" && m.name).map((m) => m.name!);
  const listed = can(me, "tenancy.read") ? await api.get<{ data: { name: string }[] }>("/projects").then((b) => b.data.map((p) => p.name), () => []) : [];
  return [...new Set([...named, ...listed])].sort();
}

export function MyKeys() {
  const t = useT();
  const me = useMe();
  const keys = useLoad(myKeys);
  const projects = useLoad(() => myProjects(me), [me]);
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<string>();
  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    createMyKey(String(f.get("project") ?? "").trim(), String(f.get("name") ?? "").trim()).then((k) => {
      setError(undefined);
      setSecret(k.key);
      keepForPlayground(k.key);
      keys.reload();
    }, setError);
  };
  const revoke = (k: MyKey) =>
    api.del(`/me/keys/${encodeURIComponent(k.id)}`).then(() => {
      setError(undefined);
      keys.reload();
    }, setError);
  const isRevoked = (k: MyKey) => k.revoked ?? !!k.revokedAt;
  return (
    <>
      <h1>{t.keys.title}</h1>
      <ErrorBox error={keys.error ?? error} />
      <Table
        caption={t.keys.title}
        head={[t.col.prefix, t.col.name, t.col.project, t.col.expires, t.col.revoked, t.col.actions]}
        empty={t.keys.none}
        rows={(keys.data ?? []).map((k) => [
          <code key="p">{k.prefix}</code>,
          k.name ?? "—",
          k.project ?? "—",
          when(k.expiresAt),
          isRevoked(k) ? "✓" : "",
          isRevoked(k) ? (
            ""
          ) : (
            <button key="r" type="button" onClick={() => void revoke(k)} aria-label={`${t.keys.revoke} ${k.prefix}`}>
              {t.keys.revoke}
            </button>
          ),
        ])}
      />
      <form className="inline" onSubmit={create} aria-label={t.keys.create}>
        <label>
          {t.col.project} <input name="project" list="my-projects" required defaultValue={projects.data?.[0] ?? ""} key={projects.data?.[0] ?? ""} />
        </label>
        <datalist id="my-projects">
          {(projects.data ?? []).map((p) => (
            <option key={p} value={p} />
          ))}
        </datalist>
        <label>
          {t.keys.name} <input name="name" maxLength={128} />
        </label>
        <button type="submit">{t.keys.create}</button>
      </form>
      {secret ? <ShownOnce secret={secret} /> : null}
    </>
  );
}
