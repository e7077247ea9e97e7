// The change feed: a Redis pub/sub channel telling every gateway that a replica became ready,
// was drained or is gone, and that keys changed. Messages are checked on receipt.
import { z } from "zod";
import type { Redis } from "ioredis";

export const CHANGE_CHANNEL = "llmgw:changes";

/**
 * The channel for a connection's database. Pub/sub channels span a server's databases, so two
 * platforms sharing one Redis server on different databases would otherwise hear each other's
 * replicas; database 0 keeps the plain name.
 */
export function changeChannel(r: Redis): string {
  const db = r.options.db ?? 0;
  return db === 0 ? CHANGE_CHANNEL : `${CHANGE_CHANNEL}:${db}`;
}

export const replicaChange = z.object({
  kind: z.literal("replica"),
  op: z.enum(["ready", "draining", "gone"]),
  replica: z.object({
    id: z.string(),
    model: z.string(),
    version: z.string(),
    nodeId: z.string(),
    url: z.string(),
    /** How many GPUs it holds (chargeback); absent from an older publisher: the gateway reads the store. */
    gpus: z.number().int().nonnegative().optional(),
  }),
});

/** The share of a model's traffic each version gets (a canary); null clears it. */
export const weightsChange = z.object({ kind: z.literal("weights"), model: z.string(), weights: z.record(z.string(), z.number().min(0)).nullable() });
export const WEIGHTS_KEY = "llmgw:weights";

export const keyChange = z.object({ kind: z.literal("key"), op: z.enum(["revoked", "changed"]), hash: z.string() });

/** A guardrail policy was added, changed or removed: gateways reload their policies (gateway/guard/service.ts). */
export const guardChange = z.object({ kind: z.literal("guard"), name: z.string() });

/** A project's answer cache settings changed (docs/cache.md): every gateway reloads them. */
export const cacheChange = z.object({ kind: z.literal("cache"), project: z.string() });
export const change = z.discriminatedUnion("kind", [replicaChange, keyChange, weightsChange, guardChange, cacheChange]);
export type WeightsChange = z.infer<typeof weightsChange>;
export type Change = z.infer<typeof change>;
export type ReplicaChange = z.infer<typeof replicaChange>;

export async function publishChange(r: Redis, c: Change): Promise<void> {
  await r.publish(changeChannel(r), JSON.stringify(c));
}

/** Subscribes on a dedicated connection (a subscribed ioredis client can do nothing else). */
export async function subscribeChanges(sub: Redis, onChange: (c: Change) => void, onBad: (raw: string) => void): Promise<void> {
  const ours = changeChannel(sub);
  sub.on("message", (channel: string, raw: string) => {
    if (channel !== ours) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      onBad(raw);
      return;
    }
    const res = change.safeParse(parsed);
    if (res.success) onChange(res.data);
    else onBad(raw);
  });
  await sub.subscribe(ours);
}
