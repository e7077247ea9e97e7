// On-demand models: how long a model has gone without a request (gateways note the last one in
// Redis), its idle limit as the catalog says it now, and what to serve when it wakes the first time.
import { ApplicationFailure } from "@temporalio/activity";
import { config } from "../common/config.ts";
import type { ServeCommand } from "../workflows/model-types.ts";
import { lastRequestKey, type IdleCheck } from "../workflows/on-demand-types.ts";
import type { ActivityDeps } from "./deps.ts";

export function onDemandActivities(deps: ActivityDeps) {
  return {
    /** Idle since the last request or `awakeSince` (when the replicas came up), whichever is later. */
    async idleCheck(input: { model: string; awakeSince: number }): Promise<IdleCheck> {
      const m = await deps.db.model.findUnique({ where: { name: input.model }, select: { minReplicas: true, idleAfterMs: true } });
      const idleAfterMs = m?.idleAfterMs ?? config().LLMGW_IDLE_AFTER_MS;
      if (!m || m.minReplicas > 0) return { onDemand: false, idleMs: 0, idleAfterMs };
      const last = Number(await deps.redis.get(lastRequestKey(input.model))) || 0;
      return { onDemand: true, idleMs: Math.max(0, Date.now() - Math.max(last, input.awakeSince)), idleAfterMs };
    },

    /** The catalog's newest version, one replica: a first wake of a model never served. */
    async wakeCommand(input: { model: string }): Promise<ServeCommand> {
      const v = await deps.db.modelVersion.findFirst({ where: { modelName: input.model }, orderBy: { createdAt: "desc" } });
      if (!v) throw ApplicationFailure.nonRetryable(`model ${input.model} has no version in the catalog to wake`);
      return { version: v.version, engine: v.engine, args: v.args as string[], contextLength: v.contextLength, replicas: 1 };
    },
  };
}
