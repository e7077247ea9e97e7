// A job of an on-demand model (catalog min_replicas 0): while it waits for a ready replica it asks
// the model to wake, as a waiting request does at the gateway, and while it waits or runs it notes
// the model as used, so the idle watch does not put the model to sleep under it. Without this a
// /v1 picture, 3D or workflow job of a sleeping model waited for ever (only MCP's tools woke it).
import type { Client } from "@temporalio/client";
import { config } from "../common/config.ts";
import { log } from "../common/logging.ts";
import { askModelToWake, noteModelUse } from "../common/model-wake.ts";
import type { ActivityDeps } from "./deps.ts";

/** The wake is asked again this often while the job waits (a wake that failed, a signal lost). */
const ASK_EVERY_MS = 10_000;
/** The use note is written at most this often. */
const NOTE_EVERY_MS = 1000;

export interface JobWaker {
  /** The job waits for a replica of `model`: asks it to wake when it is on demand. */
  noReplica(): Promise<void>;
  /** The job waits or runs: the model is in use. */
  inUse(): Promise<void>;
}

export function jobWaker(deps: Pick<ActivityDeps, "db" | "redis">, client: () => Promise<Client>, model: string): JobWaker {
  let asked = 0;
  let noted = 0;
  return {
    async noReplica() {
      if (Date.now() - asked < ASK_EVERY_MS) return;
      asked = Date.now();
      const m = await deps.db.model.findUnique({ where: { name: model }, select: { minReplicas: true } });
      if (m?.minReplicas !== 0) return; // not on demand: an operator serves it
      await askModelToWake(await client(), config().LLMGW_TASK_QUEUE, model, "a job is waiting").catch((err: unknown) => {
        asked = 0;
        log.warn("could not ask a model to wake for a job", { model, error: err as Error });
      });
    },
    async inUse() {
      if (Date.now() - noted < NOTE_EVERY_MS) return;
      noted = Date.now();
      await noteModelUse(deps.redis, model).catch(() => undefined);
    },
  };
}
