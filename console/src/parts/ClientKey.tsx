// The client API as a person calls it from the console: with one of their keys (pasted, the last
// made in this tab, or a day-long one made here), which stays in the tab's memory only. The
// playground, pictures and 3D pages share it; each lists the models that key may use.
import { useEffect, useState, type ReactNode } from "react";
import { ApiError } from "../api.ts";
import { useT } from "../messages/index.ts";
import { createMyKey, myProjects } from "../pages/MyKeys.tsx";
import { useMe } from "../session.ts";
import { keepForPlayground, playgroundKey } from "./ShownOnce.tsx";

export async function clientCall(key: string, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
    throw new ApiError(res.status, body.error?.message ?? `HTTP ${res.status}`);
  }
  return res;
}

/** The key field with "load models" and "make a key"; `onModels` gets the ids GET /v1/models gives that key. */
export function useClientKey(onError: (e: unknown) => void): { key: string; models: string[] | undefined; form: ReactNode } {
  const t = useT();
  const me = useMe();
  const [key, setKey] = useState(playgroundKey() ?? "");
  const [models, setModels] = useState<string[]>();
  const loadModels = (k = key) =>
    clientCall(k, "/v1/models")
      .then((r) => r.json() as Promise<{ data: { id: string }[] }>)
      .then((b) => setModels(b.data.map((m) => m.id)), onError);
  // A key this tab already holds (made on another page): its models at once.
  useEffect(() => void (key && loadModels(key)), []);
  // A key of the person's first project, expiring in a day.
  const makeKey = () =>
    myProjects(me)
      .then((ps) => createMyKey(ps[0] ?? "", "playground", new Date(Date.now() + 86_400_000)))
      .then((k) => {
        keepForPlayground(k.key);
        setKey(k.key);
        void loadModels(k.key);
      }, onError);
  const form = (
    <form className="inline" onSubmit={(e) => (e.preventDefault(), void loadModels())} aria-label={t.playground.key}>
      <label htmlFor="pg-key">{t.playground.key}</label>
      <input id="pg-key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} aria-describedby="pg-key-help" />
      <span id="pg-key-help" className="help">
        {t.playground.keyHelp}
      </span>
      <button type="submit" disabled={!key}>
        {t.playground.loadModels}
      </button>
      <button type="button" onClick={() => void makeKey()}>
        {t.playground.makeKey}
      </button>
    </form>
  );
  return { key, models, form };
}
