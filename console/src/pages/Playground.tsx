// The playground: a chat that streams from /v1/chat/completions with one of the person's keys. The
// model picker lists GET /v1/models as that key sees it, so it holds only what the person may use.
import { useRef, useState, type FormEvent } from "react";
import { ApiError } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox } from "../parts/common.tsx";
import { keepForPlayground, playgroundKey } from "../parts/ShownOnce.tsx";
import { useMe } from "../session.ts";
import { createMyKey, myProjects } from "./MyKeys.tsx";

async function clientCall(key: string, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
    throw new ApiError(res.status, body.error?.message ?? `HTTP ${res.status}`);
  }
  return res;
}

/** Each `data:` line's delta text of an OpenAI chat stream, as it arrives. */
async function* deltas(res: Response): AsyncGenerator<string> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) yield text;
    }
  }
}

export function Playground() {
  const t = useT();
  const me = useMe();
  const [key, setKey] = useState(playgroundKey() ?? "");
  const [models, setModels] = useState<string[]>();
  const [model, setModel] = useState("");
  const [answer, setAnswer] = useState("");
  /** How many stream events the answer came in (shown to tests and tools as data-pieces). */
  const [pieces, setPieces] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const abort = useRef<AbortController | null>(null);

  const loadModels = (k = key) =>
    clientCall(k, "/v1/models")
      .then((r) => r.json() as Promise<{ data: { id: string }[] }>)
      .then((b) => {
        const ids = b.data.map((m) => m.id);
        setModels(ids);
        setModel((m) => (ids.includes(m) ? m : (ids[0] ?? "")));
        setError(undefined);
      }, setError);
  // A key of the person's first project, expiring in a day: the playground's own.
  const makeKey = () =>
    myProjects(me)
      .then((ps) => createMyKey(ps[0] ?? "", "playground", new Date(Date.now() + 86_400_000)))
      .then((k) => {
      keepForPlayground(k.key);
      setKey(k.key);
      void loadModels(k.key);
    }, setError);

  const send = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const prompt = String(new FormData(e.currentTarget).get("prompt") ?? "");
    setAnswer("");
    setPieces(0);
    setError(undefined);
    setBusy(true);
    abort.current = new AbortController();
    try {
      const res = await clientCall(key, "/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: prompt }] }),
        signal: abort.current.signal,
      });
      for await (const text of deltas(res)) {
        setAnswer((a) => a + text);
        setPieces((n) => n + 1);
      }
    } catch (err) {
      if (!(err instanceof DOMException && err.name === "AbortError")) setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>{t.playground.title}</h1>
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
      {models && models.length === 0 ? <p>{t.playground.noModels}</p> : null}
      <form className="chat" onSubmit={(e) => void send(e)} aria-label={t.playground.title}>
        <label htmlFor="pg-model">{t.playground.model}</label>
        <select id="pg-model" value={model} onChange={(e) => setModel(e.target.value)} disabled={!models?.length}>
          {(models ?? []).map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <label htmlFor="pg-prompt">{t.playground.prompt}</label>
        <textarea id="pg-prompt" name="prompt" rows={3} required />
        <button type="submit" disabled={busy || !model}>
          {t.playground.send}
        </button>
        <button type="button" disabled={!busy} onClick={() => abort.current?.abort()}>
          {t.playground.stop}
        </button>
      </form>
      <ErrorBox error={error} />
      <section aria-labelledby="pg-answer">
        <h2 id="pg-answer">{t.playground.answer}</h2>
        <output className="answer" aria-live="polite" data-busy={busy} data-pieces={pieces}>
          {answer}
        </output>
      </section>
    </>
  );
}
