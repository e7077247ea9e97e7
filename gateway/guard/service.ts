// The guard as the gateway runs it: every policy read from the store and compiled once, reloaded
// when the change feed says one changed; each request's merged policy kept per key and model until
// the next reload; blocks and flags written to guard_events (never the text) and counted.
import { randomUUID } from "node:crypto";
import { Counter, Histogram, type Registry } from "prom-client";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import type { KeyInfo } from "../auth/key-cache.ts";
import { ApiError } from "../errors.ts";
import { GuardBlock, TextCheck, type GuardDecision } from "./check.ts";
import type { Judge } from "./judge.ts";
import { applies, merge, type MergedPolicy, type StoredPolicy } from "./merge.ts";
import { preloadPersonNames } from "./detectors/pii.ts";
import { checkPolicy } from "./policy.ts";

type Attached = StoredPolicy & { scope: string };

export async function loadPolicies(db: PrismaClient): Promise<Attached[]> {
  const rows = await db.guardPolicy.findMany({ orderBy: { name: "asc" } });
  const out: Attached[] = [];
  for (const row of rows) {
    try {
      const doc = checkPolicy(row.document);
      out.push({ name: row.name, version: row.version, doc, scope: doc.scope });
    } catch (err) {
      // Checked when added, so only a hand-edited row gets here: it is left out, and said so.
      log.warn("a stored guard policy no longer checks; it is not applied", { policy: row.name, error: err as Error });
    }
  }
  if (out.some((p) => [...p.doc.input, ...p.doc.output].some((r) => r.kinds?.includes("person")))) preloadPersonNames();
  return out;
}

/** The policies that apply to a key and model, merged (null when none does). */
export function mergedFor(policies: readonly Attached[], key: Pick<KeyInfo, "id" | "projectId" | "teamId" | "orgId">, model: string): MergedPolicy | null {
  const mine = policies.filter((p) => applies(p.scope, key, model));
  return mine.length ? merge(mine) : null;
}

export class GuardService {
  private policies: Attached[] = [];
  private merged = new Map<string, MergedPolicy | null>();
  private readonly decisions: Counter<"policy" | "rule" | "action" | "direction">;
  /** How long the judge took, by model and outcome (safe, unsafe, failed). */
  readonly judgeSeconds: Histogram<"model" | "outcome">;
  /** How long an outside service took, by policy, rule and outcome (safe, unsafe, failed). */
  readonly serviceSeconds: Histogram<"policy" | "rule" | "outcome">;
  /** Asks the judge models; null where no judge can be asked (then a judge rule fails, and `fail` decides). */
  judge: Judge | null = null;

  constructor(
    private readonly db: PrismaClient,
    metrics: Registry,
  ) {
    this.decisions = new Counter({
      name: "llmgw_guard_decisions_total",
      help: "Guardrail blocks and flags by policy, rule, action and direction",
      labelNames: ["policy", "rule", "action", "direction"],
      registers: [metrics],
    });
    this.judgeSeconds = new Histogram({
      name: "llmgw_guard_judge_seconds",
      help: "How long a guardrail judge model took to answer, by model and outcome (safe, unsafe, failed)",
      labelNames: ["model", "outcome"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics],
    });
    this.serviceSeconds = new Histogram({
      name: "llmgw_guard_service_seconds",
      help: "How long a guardrail's outside service took to answer, by policy, rule and outcome (safe, unsafe, failed)",
      labelNames: ["policy", "rule", "outcome"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics],
    });
  }

  async reload(): Promise<void> {
    this.policies = await loadPolicies(this.db);
    this.merged = new Map();
  }

  /** The merged policy for this request, or null when none applies (the usual case costs one map lookup). */
  policyFor(key: KeyInfo, model: string): MergedPolicy | null {
    if (this.policies.length === 0) return null;
    const id = `${key.id}\0${model}`;
    let m = this.merged.get(id);
    if (m === undefined) {
      m = mergedFor(this.policies, key, model);
      if (this.merged.size > 10_000) this.merged.clear();
      this.merged.set(id, m);
    }
    return m;
  }

  /** Records blocks and flags: a row each (written in the background) and the counter. */
  record(decisions: readonly GuardDecision[], key: KeyInfo, model: string): void {
    if (decisions.length === 0) return;
    for (const d of decisions) this.decisions.inc({ policy: d.policy, rule: d.rule, action: d.action, direction: d.direction });
    const at = new Date();
    this.db.guardEvent
      .createMany({ data: decisions.map((d) => ({ id: randomUUID(), at, keyId: key.id, projectId: key.projectId, model, ...d })) })
      .catch((err: unknown) => log.warn("could not record guard events", { count: decisions.length, error: err as Error }));
  }

  /**
   * A job's texts (a picture's prompt and negative prompt) checked by the input rules, as the
   * inference routes' bodies are: the texts as the job may use them (redacted), or a GuardBlock.
   */
  checkTexts<T extends Record<string, string | undefined>>(key: KeyInfo, model: string, texts: T): T {
    const policy = this.policyFor(key, model);
    if (policy === null || policy.input.length === 0) return texts;
    const c = new TextCheck(policy.input, "input");
    try {
      const out = Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, v === undefined ? v : c.text(v)])) as T;
      this.record(c.decisions, key, model);
      return out;
    } catch (err) {
      if (err instanceof GuardBlock) {
        this.record(err.decisions, key, model);
        throw err;
      }
      log.error("a guardrail check failed", { policies: policy.policies.join(","), fail: policy.fail, error: err as Error });
      if (policy.fail === "closed") throw new ApiError("unavailable", "the guardrail check failed and this policy fails closed; try again", { code: "guard_failed", retryAfterS: 1 });
      return texts;
    }
  }
}
