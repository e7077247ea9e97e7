// Every limit row, held in memory and refreshed on a timer, so finding the limits that apply to a
// request reads no store. A key is limited by its own row and those of its project, team and org.
import type { PrismaClient } from "../../common/db.ts";
import { refreshEvery } from "../../common/refresh-timer.ts";
import type { KeyInfo } from "./key-cache.ts";

export const LIMIT_SCOPES = ["org", "team", "project", "key"] as const;
export type LimitScope = (typeof LIMIT_SCOPES)[number];

export interface ScopeLimits {
  scope: LimitScope;
  scopeId: string;
  rpm: number | null;
  tpm: number | null;
  concurrent: number | null;
  monthlyBudgetMicros: number | null;
  /** GPU-seconds a month (set in GPU-hours); spent by what requests cost on our replicas. */
  monthlyBudgetGpuSeconds: number | null;
}

const REFRESH_MS = 3_000;

/** The scopes a key's requests count against, widest first. */
export function scopesOf(key: KeyInfo): { scope: LimitScope; scopeId: string }[] {
  return [
    { scope: "org", scopeId: key.orgId },
    { scope: "team", scopeId: key.teamId },
    { scope: "project", scopeId: key.projectId },
    { scope: "key", scopeId: key.id },
  ];
}

export class LimitBook {
  private rows = new Map<string, ScopeLimits>();
  /** Bumped on every refresh, so what was derived from the rows can be kept until they change. */
  version = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: PrismaClient) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = refreshEvery("limit", REFRESH_MS, () => this.refresh());
  }

  async refresh(): Promise<void> {
    const rows = await this.db.limit.findMany();
    this.version++;
    this.rows = new Map(
      rows.map((r) => [
        `${r.scope}:${r.scopeId}`,
        {
          scope: r.scope as LimitScope,
          scopeId: r.scopeId,
          rpm: r.rpm,
          tpm: r.tpm,
          concurrent: r.concurrent,
          monthlyBudgetMicros: r.monthlyBudgetMicros === null ? null : Number(r.monthlyBudgetMicros),
          monthlyBudgetGpuSeconds: r.monthlyBudgetGpuSeconds ?? null,
        },
      ]),
    );
  }

  /** The limits set at any level above or at this key; empty when none. */
  forKey(key: KeyInfo): ScopeLimits[] {
    const out: ScopeLimits[] = [];
    for (const s of scopesOf(key)) {
      const row = this.rows.get(`${s.scope}:${s.scopeId}`);
      if (row) out.push(row);
    }
    return out;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
