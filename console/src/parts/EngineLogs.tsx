// Each replica's engine log: the last 64 KiB from its node's agent (GET /replicas/{id}/logs), then,
// live, what the engine writes next, until "Stop" or another replica is chosen. The text is kept
// to its last 256 KiB so a chatty engine cannot fill the tab.
import { useEffect, useRef, useState } from "react";
import { ApiError } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table } from "./common.tsx";
import { listModels } from "./fleet.ts";
import { useLoad } from "./load.ts";

const KEEP = 256 << 10;

export function EngineLogs() {
  const t = useT();
  const models = useLoad(listModels, [], 5000);
  const replicas = (models.data ?? []).flatMap((m) => m.replicas.map((r) => ({ ...r, model: m.name })));
  const [open, setOpen] = useState<string>();
  const [text, setText] = useState("");
  const [live, setLive] = useState(false);
  const [error, setError] = useState<unknown>();
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    if (!open) return;
    const ac = new AbortController();
    setText("");
    setError(undefined);
    setLive(true);
    void (async () => {
      const res = await fetch(`/api/v1/replicas/${encodeURIComponent(open)}/logs?tail=65536&follow=true`, { credentials: "same-origin", signal: ac.signal });
      if (!res.ok) {
        const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
        throw new ApiError(res.status, body.error?.message ?? `HTTP ${res.status}`);
      }
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        setText((old) => (old + value).slice(-KEEP));
      }
    })()
      .catch((err: unknown) => {
        if (!(err instanceof DOMException && err.name === "AbortError")) setError(err);
      })
      .finally(() => setLive(false));
    return () => ac.abort();
  }, [open]);
  // Follow the end as it grows.
  useEffect(() => void (pre.current && (pre.current.scrollTop = pre.current.scrollHeight)), [text]);

  return (
    <Section title={t.logs.title}>
      <ErrorBox error={models.error ?? error} />
      <Table
        caption={t.logs.title}
        head={[t.col.name, t.col.version, t.col.node, t.col.state, t.col.actions]}
        empty={t.models.noReplicas}
        rows={replicas.map((r) => [
          r.model,
          r.version,
          r.node,
          r.state,
          <button key="l" type="button" aria-pressed={open === r.id} onClick={() => setOpen(open === r.id ? undefined : r.id)} aria-label={`${open === r.id ? t.logs.stop : t.logs.show} ${r.id}`}>
            {open === r.id ? t.logs.stop : t.logs.show}
          </button>,
        ])}
      />
      {open ? (
        <figure className="engine-log">
          <figcaption>
            {t.logs.of} {open} {live ? <span className="live">({t.logs.live})</span> : null}
          </figcaption>
          <pre ref={pre} tabIndex={0} data-testid="engine-log" data-live={live}>
            {text}
          </pre>
        </figure>
      ) : null}
    </Section>
  );
}
