// The overhead bench's `--guard` mode (./overhead.ts): a second key of the bench's project with a
// typical guardrail policy on it (the detectors' default kinds, no judge), and the figures of its
// target "gw-guard" set against the plain key's "gateway" from the same runs: CPU per request,
// added p50 and p99, and the host's steal meanwhile (/proc/stat).
import fs from "node:fs";
import path from "node:path";
import type { Platform } from "../helpers/platform.ts";
import type { Run } from "./overhead.ts";

export const BENCH_POLICY = (keyId: string) => `name: bench-typical
scope: key:${keyId}
input:
  - {name: personal, detector: pii, action: redact}
  - {name: secrets, detector: secrets, action: block}
  - {name: injection, detector: injection, action: flag}
  - {name: codenames, detector: deny, patterns: ['project-[a-z]+'], action: block}
output:
  - {name: secrets-out, detector: secrets, action: block}
`;

/** A key with the typical policy on it, once every gateway has loaded the policy. */
export async function addGuardKey(p: Platform, model: string, limits: boolean): Promise<string> {
  const created = await p.ctl(["keys", "create", "--project", "bench", "--json"]);
  if (created.code !== 0) throw new Error(created.stderr);
  const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
  if (limits) {
    const limited = await p.ctl(["keys", "limits", id, "--rpm", "100000000", "--tpm", "1000000000", "--concurrent", "100000"]);
    if (limited.code !== 0) throw new Error(limited.stderr);
  }
  const file = path.join(p.dataDir, "bench-guard-policy.yaml");
  fs.writeFileSync(file, BENCH_POLICY(id));
  const added = await p.ctl(["guard", "policy", "add", "-f", file]);
  if (added.code !== 0) throw new Error(added.stderr);
  // The gateway reloads over the change feed: wait until a request with a secret is refused.
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: `use AKIAIOSFODNN7EXAMPLE` }], max_tokens: 1 }),
    });
    await r.arrayBuffer();
    if (r.status === 400) return key;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("the gateway never applied the bench's guard policy");
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Per rate: the guarded key's figures next to the plain key's, the medians over the runs. */
export function guardRatios(runs: Run[], rows: unknown[]): void {
  process.stdout.write("\nguardrails (gw-guard) against none (gateway), same gateway, same runs: medians\nrate/s  CPU s/1000 none  guard   extra CPU  added p50 none  guard  added p99 none  guard  steal ms/s  extra CPU of each run\n");
  for (const rate of [...new Set(runs.map((r) => r.rate))]) {
    const of = (t: string) => runs.filter((r) => r.rate === rate && r.target === t);
    const [none, guard] = [of("gateway"), of("gw-guard")];
    const pairs = none.map((n, i) => [n, guard[i]!] as const).filter(([n, g]) => n.cpu !== undefined && g?.cpu !== undefined);
    if (pairs.length === 0) continue;
    const extra = pairs.map(([n, g]) => g.cpu! / n.cpu! - 1);
    const m = (xs: Run[], f: (r: Run) => number) => median(xs.map(f));
    const row = {
      rate,
      target: "guard-vs-none",
      cpu_none: m(none, (r) => r.cpu!),
      cpu_guard: m(guard, (r) => r.cpu!),
      extra_cpu: median(extra),
      added_p50_none: m(none, (r) => r.addedP50),
      added_p50_guard: m(guard, (r) => r.addedP50),
      added_p99_none: m(none, (r) => r.addedP99),
      added_p99_guard: m(guard, (r) => r.addedP99),
      steal_ms_per_s: m([...none, ...guard], (r) => r.steal),
    };
    const f = (x: number, w: number, d = 3) => x.toFixed(d).padStart(w);
    process.stdout.write(
      `${String(rate).padStart(6)}  ${f(row.cpu_none, 15)} ${f(row.cpu_guard, 6)}  ${`${(row.extra_cpu * 100).toFixed(1)} %`.padStart(9)}  ${f(row.added_p50_none, 14)} ${f(row.added_p50_guard, 6)}  ${f(row.added_p99_none, 14)} ${f(row.added_p99_guard, 6)}  ${f(row.steal_ms_per_s, 10, 0)}  ${extra.map((x) => `${(x * 100).toFixed(1)}%`).join(" ")}\n`,
    );
    rows.push(row);
  }
}
