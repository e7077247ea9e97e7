// Usage: requests, tokens, cost and GPU-seconds per day, one line per org, team, project, person,
// model or key (the dimension chosen), drawn with uPlot from GET /usage?by=day,<dimension>; CSV
// export of the same query; budgets (GET /limits) beside this month's spend (parts/Budgets.tsx).
import { useMemo, useState } from "react";
import { api } from "../api.ts";
import { fill, useT } from "../messages/index.ts";
import { Budgets } from "../parts/Budgets.tsx";
import { ErrorBox, Table } from "../parts/common.tsx";
import { useLoad } from "../parts/load.ts";
import { UsageChart, type Series } from "../parts/UsageChart.tsx";
import { can } from "../roles.ts";
import { useMe } from "../session.ts";

const DIMENSIONS = ["org", "team", "project", "person", "model", "key"] as const;
type Dimension = (typeof DIMENSIONS)[number];
type Row = { day: string; requests: number; promptTokens: number; completionTokens: number; cost: number; gpuSeconds?: number } & Record<Dimension, string | null>;
type Measure = "requests" | "tokens" | "cost" | "gpuSeconds";


const isoDay = (d: Date) => d.toISOString().slice(0, 10);
const measureOf = (r: Row, m: Measure) => (m === "tokens" ? r.promptTokens + r.completionTokens : m === "gpuSeconds" ? (r.gpuSeconds ?? 0) : r[m]);

/** Every day from `from` up to, not including, `to` (YYYY-MM-DD, UTC); at most ~3 years of them. */
function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = Date.parse(`${from}T00:00:00Z`), end = Date.parse(`${to}T00:00:00Z`); d < end && out.length < 1100; d += 86_400_000) out.push(isoDay(new Date(d)));
  return out;
}

/** Rows of (day, group) → x values (unix seconds of each day of the range) and one series per group, 0 on days without use. */
function toSeries(rows: Row[], dim: Dimension, measure: Measure, dayList: string[]): { days: number[]; series: Series[] } {
  const index = new Map(dayList.map((d, i) => [d, i]));
  const groups = new Map<string, (number | null)[]>();
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    const g = r[dim] ?? "—";
    let values = groups.get(g);
    if (!values) groups.set(g, (values = dayList.map(() => 0)));
    values[i] = measureOf(r, measure);
  }
  return { days: dayList.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000), series: [...groups].map(([label, values]) => ({ label, values })) };
}

export function Usage() {
  const t = useT();
  const me = useMe();
  const [dim, setDim] = useState<Dimension>("model");
  const [from, setFrom] = useState(isoDay(new Date(Date.now() - 14 * 86_400_000)));
  const [to, setTo] = useState(isoDay(new Date(Date.now() + 86_400_000)));
  const query = `/usage?by=day,${dim}&from=${from}&to=${to}`;
  const usage = useLoad(() => api.get<{ data: Row[] }>(query).then((b) => b.data), [query], 10_000);
  const [csvError, setCsvError] = useState<unknown>();
  const rows = usage.data;
  const charts = useMemo(() => {
    if (!rows) return [];
    const dayList = daysBetween(from, to);
    return (["requests", "tokens", "cost", "gpuSeconds"] as Measure[]).map((m) => ({ m, ...toSeries(rows, dim, m, dayList) }));
  }, [rows, dim, from, to]);
  const names: Record<Measure, string> = { requests: t.usage.requests, tokens: t.usage.tokens, cost: t.usage.cost, gpuSeconds: t.usage.gpuSeconds };

  const download = () =>
    api.text(`${query}&format=csv`).then(
      (csv) => {
        const a = document.createElement("a");
        a.href = URL.createObjectURL(new Blob([csv], { type: "text/csv" }));
        a.download = `usage-${dim}-${from}-${to}.csv`;
        a.click();
        setTimeout(() => URL.revokeObjectURL(a.href), 1000);
      },
      (e: unknown) => setCsvError(e),
    );

  return (
    <>
      <h1>{t.usage.title}</h1>
      <form className="inline" onSubmit={(e) => e.preventDefault()} aria-label={t.usage.title}>
        <label>
          {t.usage.dimension}{" "}
          <select value={dim} onChange={(e) => setDim(e.target.value as Dimension)}>
            {DIMENSIONS.map((d) => (
              <option key={d} value={d}>
                {t.usage.dimensions[d]}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t.usage.from} <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} required />
        </label>
        <label>
          {t.usage.to} <input type="date" value={to} onChange={(e) => setTo(e.target.value)} required />
        </label>
        <button type="button" onClick={() => void download()}>
          {t.usage.csv}
        </button>
      </form>
      <ErrorBox error={usage.error ?? csvError} />
      {rows && rows.length === 0 ? <p>{t.usage.noData}</p> : null}
      <div className="charts">
        {charts.map((c) => (
          <UsageChart key={c.m} title={fill(t.usage.chartOf, { measure: names[c.m], dimension: t.usage.dimensions[dim] })} days={c.days} series={c.series} />
        ))}
      </div>
      {rows?.length ? (
        <Table
          caption={t.usage.title}
          head={[t.usage.day, t.usage.dimensions[dim], t.usage.requests, t.usage.tokens, t.usage.cost, t.usage.gpuSeconds]}
          rows={rows.map((r) => [r.day, r[dim] ?? "—", r.requests, r.promptTokens + r.completionTokens, r.cost.toFixed(4), (r.gpuSeconds ?? 0).toFixed(1)])}
        />
      ) : null}
      {/* GET /limits is the tenancy roles' (a viewer reads usage, not limits). */}
      {can(me, "tenancy.read") ? <Budgets /> : null}
    </>
  );
}
