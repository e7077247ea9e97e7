// Budgets beside what is spent: every limit with a monthly budget (money or GPU-hours) from
// GET /limits, and this month's spend of its org, team, project or key from GET /usage grouped by
// that scope (the limit's name is the usage report's group: ORG/TEAM for a team, the id for a key).
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table } from "./common.tsx";
import { useLoad } from "./load.ts";

export interface Limit {
  scope: "org" | "team" | "project" | "key";
  name: string;
  rpm: number | null;
  tpm: number | null;
  concurrent?: number | null;
  monthlyBudget: number | null;
  monthlyBudgetGpuHours?: number | null;
  tools?: string[];
}
type Spent = { cost: number; gpuSeconds: number };

export const listLimits = () => api.get<{ data: Limit[] }>("/limits").then((b) => b.data);

/** This month's spend per name of each scope that has a limit. */
async function spentBy(scopes: Set<Limit["scope"]>): Promise<Map<string, Spent>> {
  const month = `${new Date().toISOString().slice(0, 7)}-01`;
  const out = new Map<string, Spent>();
  await Promise.all(
    [...scopes].map(async (scope) => {
      const rows = (await api.get<{ data: (Record<string, string | null> & { cost: number; gpuSeconds?: number })[] }>(`/usage?by=${scope}&from=${month}`)).data;
      for (const r of rows) out.set(`${scope}:${r[scope] ?? ""}`, { cost: r.cost, gpuSeconds: r.gpuSeconds ?? 0 });
    }),
  );
  return out;
}

/** "spent / budget (percent)", or the spend alone where no budget is set. */
function ofBudget(spent: number, budget: number | null | undefined, digits: number): string {
  if (budget === null || budget === undefined) return spent ? spent.toFixed(digits) : "—";
  const pct = budget > 0 ? ` (${Math.round((spent / budget) * 100)}%)` : "";
  return `${spent.toFixed(digits)} / ${budget}${pct}`;
}

export function Budgets() {
  const t = useT();
  const load = useLoad(async () => {
    const limits = await listLimits();
    return { limits, spent: await spentBy(new Set(limits.map((l) => l.scope))) };
  });
  const limits = load.data?.limits ?? [];
  return (
    <Section title={t.usage.budgets}>
      <ErrorBox error={load.error} />
      <Table
        caption={t.usage.budgets}
        head={[t.col.kind, t.col.name, "rpm", "tpm", t.usage.spentMoney, t.usage.spentGpuHours]}
        rows={limits.map((l) => {
          const s = load.data?.spent.get(`${l.scope}:${l.name}`) ?? { cost: 0, gpuSeconds: 0 };
          return [l.scope, l.name, l.rpm ?? "—", l.tpm ?? "—", ofBudget(s.cost, l.monthlyBudget, 4), ofBudget(s.gpuSeconds / 3600, l.monthlyBudgetGpuHours, 3)];
        })}
      />
    </Section>
  );
}
