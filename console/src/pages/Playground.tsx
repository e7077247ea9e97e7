// The playground: a chat that streams from /v1/chat/completions with one of the person's keys. The
// model picker lists GET /v1/models as that key sees it, so it holds only what the person may use.
import { useEffect, useRef, useState, type FormEvent } from "react";
import { useT } from "../messages/index.ts";
import { clientCall, useClientKey } from "../parts/ClientKey.tsx";
import { ErrorBox } from "../parts/common.tsx";

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
  const [error, setError] = useState<unknown>();
  const { key, models, form } = useClientKey(setError);
  const [model, setModel] = useState("");
  const [answer, setAnswer] = useState("");
  /** How many stream events the answer came in (shown to tests and tools as data-pieces). */
  const [pieces, setPieces] = useState(0);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  // The picker follows the key's models, keeping the one chosen while it is still among them.
  useEffect(() => {
    if (!models) return;
    setModel((m) => (models.includes(m) ? m : (models[0] ?? "")));
    setError(undefined);
  }, [models]);

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
      {form}
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
