// One request's usage, as the gateway emits it and the usage worker writes it. The id is made
// once on the gateway, so the ledger write is keyed by it and a retried batch counts nothing twice.
import { z } from "zod";

export const USAGE_QUEUE = "llmgw-usage";

export const usageEvent = z.object({
  id: z.string(),
  at: z.string(),
  keyId: z.string().nullable(),
  projectId: z.string().nullable(),
  model: z.string(),
  version: z.string().nullable(),
  replicaId: z.string().nullable(),
  endpoint: z.string(),
  promptTokens: z.number().int().nonnegative(),
  cachedTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  costMicros: z.number().int().nonnegative(),
  latencyMs: z.number().nonnegative(),
  ttftMs: z.number().nonnegative().nullable(),
  status: z.number().int(),
});
export type UsageEvent = z.infer<typeof usageEvent>;

export const usageBatch = z.object({ events: z.array(usageEvent) });
