// One request's usage event as the client routes record it: who (the key, its project and person),
// what (model, route), when and how long since `started`; everything else is given or zero.
import { randomUUID } from "node:crypto";
import type { UsageEvent } from "../../common/usage-event.ts";
import type { KeyInfo } from "../auth/key-cache.ts";

type Given = Pick<UsageEvent, "status"> & Partial<Omit<UsageEvent, "id" | "at" | "keyId" | "projectId" | "personId" | "model" | "endpoint" | "latencyMs">>;

export function usageRow(key: KeyInfo, model: string, endpoint: string, started: number, given: Given): UsageEvent {
  return {
    id: randomUUID(),
    at: new Date().toISOString(),
    keyId: key.id,
    projectId: key.projectId,
    personId: key.personId ?? null,
    model,
    version: null,
    replicaId: null,
    endpoint,
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    costMicros: 0,
    latencyMs: performance.now() - started,
    ttftMs: null,
    gpuSeconds: 0,
    ...given,
  };
}
