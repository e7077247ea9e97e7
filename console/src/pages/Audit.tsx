// The audit log (GET /audit): who changed what and when, the admin API's changes or the MCP tool
// calls, over a chosen span back from now, newest first, a page at a time (older pages on asking).
// Read-only; platform-admin's, as the route is.
import { useEffect, useState } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Table, when } from "../parts/common.tsx";
import { useLoad } from "../parts/load.ts";

interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

const SPANS = ["1h", "24h", "7d", "30d"] as const;
const PAGE = 100;
const SOURCES = ["", "admin", "mcp"] as const;
const brief = (v: unknown) => (v === null || v === undefined ? "—" : JSON.stringify(v).slice(0, 160));

export function Audit() {
  const t = useT();
  const [since, setSince] = useState<(typeof SPANS)[number]>("24h");
  const [source, setSource] = useState<(typeof SOURCES)[number]>("");
  const [cursor, setCursor] = useState<string | null>(null);
  const [shown, setShown] = useState<AuditRow[]>([]);
  const page = useLoad(() => api.get<{ data: AuditRow[]; next: string | null }>(`/audit?since=${since}&order=desc&limit=${PAGE}${source ? `&source=${source}` : ""}${cursor ? `&cursor=${cursor}` : ""}`), [since, source, cursor]);
  // A new span or source starts again from the newest; an older page is added below what is shown.
  useEffect(() => {
    setCursor(null);
    setShown([]);
  }, [since, source]);
  useEffect(() => {
    if (page.data) setShown((s) => (cursor === null ? page.data!.data : [...s, ...page.data!.data]));
  }, [page.data]);
  return (
    <>
      <h1>{t.audit.title}</h1>
      <form className="inline" onSubmit={(e) => e.preventDefault()} aria-label={t.audit.title}>
        <label>
          {t.audit.since}{" "}
          <select value={since} onChange={(e) => setSince(e.target.value as (typeof SPANS)[number])}>
            {SPANS.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          {t.audit.source}{" "}
          <select value={source} onChange={(e) => setSource(e.target.value as (typeof SOURCES)[number])}>
            {SOURCES.map((s) => (
              <option key={s} value={s}>
                {s ? t.audit.sources[s] : t.audit.sources.all}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={page.error} />
      <Table
        caption={t.audit.title}
        head={[t.col.when, t.audit.actor, t.audit.action, t.audit.target, t.audit.before, t.audit.after]}
        empty={t.overview.none}
        rows={shown.map((r) => [when(r.at), r.actor, r.action, r.target, <code key="b">{brief(r.before)}</code>, <code key="a">{brief(r.after)}</code>])}
      />
      <p role="status">
        {shown.length} {t.audit.shown}
      </p>
      {page.data?.next ? (
        <button type="button" onClick={() => setCursor(page.data!.next)}>
          {t.audit.older}
        </button>
      ) : null}
    </>
  );
}
