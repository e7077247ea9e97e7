// What a canary needs: traffic shares per version for the gateways, and the gateways' own
// measurements of each version over a window, read from the usage ledger they write.
import type { ActivityDeps } from "./deps.ts";
import { setWeights } from "./router-feed.ts";

export interface VersionFigures {
  requests: number;
  errors: number;
  errorRate: number;
  /** Median latency in milliseconds, null without requests. */
  p50Ms: number | null;
}

export function canaryActivities(deps: ActivityDeps) {
  return {
    async setRouteWeights(input: { model: string; weights: Record<string, number> | null }): Promise<void> {
      await setWeights(deps, input.model, input.weights);
    },

    /** Requests, server errors and median latency per version since `sinceMs`. */
    async versionFigures(input: { model: string; versions: string[]; sinceMs: number }): Promise<Record<string, VersionFigures>> {
      const rows = await deps.db.$queryRaw<{ version: string; requests: bigint; errors: bigint; p50: number | null }[]>`
        SELECT version, count(*) AS requests, count(*) FILTER (WHERE status >= 500) AS errors,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50
        FROM usage_events
        WHERE model = ${input.model} AND at >= ${new Date(input.sinceMs)} AND version = ANY(${input.versions})
        GROUP BY version`;
      const out: Record<string, VersionFigures> = {};
      for (const v of input.versions) {
        const r = rows.find((x) => x.version === v);
        const requests = Number(r?.requests ?? 0);
        const errors = Number(r?.errors ?? 0);
        out[v] = { requests, errors, errorRate: requests ? errors / requests : 0, p50Ms: r?.p50 ?? null };
      }
      return out;
    },
  };
}
