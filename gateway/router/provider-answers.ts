// What an outside provider's refusal does to the key that got it: a 401 or 403 takes the key out
// (until its keys file changes) and raises the `external_key_refused` notification; a 429 holds the key's breaker
// open for the Retry-After the provider gave (else a default). Either way the request goes to
// another key or provider before the client has seen a byte. Logs name the endpoint and the key's
// hash prefix, never the key.
import type { IncomingHttpHeaders } from "node:http";
import { log } from "../../common/logging.ts";
import { raise } from "../../common/notifier.ts";
import type { Endpoint } from "./endpoint.ts";

/** A 429 without a Retry-After holds the key this long; a given one is kept within bounds. */
export const DEFAULT_LIMITED_MS = 10_000;
export const MAX_LIMITED_MS = 10 * 60_000;

export function isKeyRefusal(status: number): boolean {
  return status === 401 || status === 403 || status === 429;
}

/** Retry-After as seconds or an HTTP date, in ms from now; the default when absent or unreadable. */
export function retryAfterMs(v: IncomingHttpHeaders[string], now: number): number {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return DEFAULT_LIMITED_MS;
  const secs = Number(s);
  const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(s) - now;
  if (!Number.isFinite(ms)) return DEFAULT_LIMITED_MS;
  return Math.min(MAX_LIMITED_MS, Math.max(1_000, ms));
}

/** Records the refusal on the endpoint (breaker, counts) and logs it. Off the hot path: only on a refusal. */
export function keyRefused(e: Endpoint, status: number, headers: IncomingHttpHeaders, now: number): void {
  const o = e.outside!;
  if (status === 429) {
    const ms = retryAfterMs(headers["retry-after"], now);
    o.limited++;
    e.breaker.hold(now, ms);
    log.warn("outside key at its limit; passed over while its breaker is open", { event: "external_key_limited", model: e.model, endpoint: e.id, provider: o.provider, keyHash: o.keyRef, holdMs: ms });
    return;
  }
  o.refused++;
  e.breaker.hold(now, Infinity);
  raise({
    kind: "external_key_refused",
    subject: e.id,
    summary: `outside provider ${o.provider} refused key ${e.id} of model ${e.model} (HTTP ${status}); it is passed over until its keys file changes`,
    details: { model: e.model, endpoint: e.id, provider: o.provider, keyHash: o.keyRef, status },
  });
}

/** Is there still an endpoint this request has not tried that may take it? */
export function anotherUsable(endpoints: readonly Endpoint[], tried: ReadonlySet<string>, now: number): boolean {
  for (const e of endpoints) if (!tried.has(e.id) && e.breaker.allows(now)) return true;
  return false;
}

/** Every endpoint is an outside key the provider refused (for the error a request then gets). */
export function allKeysRefused(endpoints: readonly Endpoint[]): boolean {
  return endpoints.length > 0 && endpoints.every((e) => e.outside !== null && e.breaker.heldMs === Infinity);
}
