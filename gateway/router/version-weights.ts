// Shares of a model's traffic per version, set while a canary runs. A request first draws a
// version by weight, then the profile picks among that version's replicas.
import type { Endpoint, VersionWeights } from "./endpoint.ts";

/** The replicas of one version drawn by weight; all of them when no weights apply. */
export function byWeight(all: Endpoint[], weights: VersionWeights | null, draw = Math.random()): Endpoint[] {
  if (!weights || all.length === 0) return all;
  const present = [...new Set(all.map((e) => e.version))];
  const total = present.reduce((sum, v) => sum + (weights[v] ?? 0), 0);
  if (total <= 0) return all;
  let r = draw * total;
  for (const v of present) {
    r -= weights[v] ?? 0;
    if (r < 0) return all.filter((e) => e.version === v);
  }
  return all;
}
