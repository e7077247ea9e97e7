// The sign-in page: the providers /auth/providers lists, each a link to its start route (OIDC), or a
// username and password form (LDAP). They come back to the page the person asked for.
import { useState, type FormEvent } from "react";
import { request } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox } from "../parts/common.tsx";
import { useLoad } from "../parts/load.ts";
import { BASE } from "../router.ts";

interface Provider {
  name: string;
  kind?: string;
  type?: string;
  label?: string;
  displayName?: string;
}

/** The list whichever way it is wrapped: an array, {data: []} or {providers: []}. */
function providersOf(body: unknown): Provider[] {
  if (Array.isArray(body)) return body as Provider[];
  const o = body as { data?: Provider[]; providers?: Provider[] };
  return o.data ?? o.providers ?? [];
}

export function SignIn() {
  const t = useT();
  const providers = useLoad(async () => providersOf(await (await request("GET", "/auth/providers")).json()));
  const back = location.pathname.startsWith(`${BASE}/signin`) ? `${BASE}/` : location.pathname + location.search;
  return (
    <div className="signin">
      <h1>{t.signIn.title}</h1>
      <p>{t.signIn.intro}</p>
      <ErrorBox error={providers.error} />
      {providers.data?.length === 0 ? <p>{t.signIn.none}</p> : null}
      <ul className="providers">
        {providers.data?.map((p) => {
          const kind = p.kind ?? p.type ?? "oidc";
          const label = p.label ?? p.displayName ?? p.name;
          return (
            <li key={`${kind}:${p.name}`}>
              {kind === "ldap" ? (
                <LdapForm label={label} back={back} />
              ) : (
                <a className="button" href={`/auth/oidc/${encodeURIComponent(p.name)}/start?return=${encodeURIComponent(back)}`}>
                  {t.signIn.with} {label}
                </a>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function LdapForm({ label, back }: { label: string; back: string }) {
  const t = useT();
  const [error, setError] = useState<unknown>();
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    request("POST", "/auth/ldap", { username: f.get("username"), password: f.get("password") }).then(
      () => location.assign(back),
      (err: unknown) => setError(err),
    );
  };
  return (
    <form onSubmit={submit} aria-label={`${t.signIn.with} ${label}`}>
      <label>
        Username <input name="username" autoComplete="username" required />
      </label>
      <label>
        Password <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <button type="submit">
        {t.signIn.with} {label}
      </button>
      <ErrorBox error={error} />
    </form>
  );
}
