// Fallbacks: a model's `fallbacks: [other models]` take a request only when the model itself has
// no room — no ready endpoint that may take it, or admission would make it wait (every slot
// taken, or its band's queue already waiting). The first fallback with room wins; when none has
// any, the request stays with its model and queues there as usual. Decided once, before the
// request is sent, so an answer that fails after it started streaming never moves.
import { modelAllowed, type KeyInfo } from "../auth/key-cache.ts";
import { checkRequestLimits } from "./request-limits.ts";
import { bandOf, type Band } from "./admission.ts";
import type { Endpoint } from "./endpoint.ts";
import type { EndpointRegistry } from "./registry.ts";

/** Does the model have an endpoint to send to and admission room for the band, now? */
export function hasRoom(endpoints: readonly Endpoint[], band: Band, now = Date.now()): boolean {
  if (endpoints.length === 0) return false;
  if (!endpoints[0]!.group.admission.hasRoom(band)) return false;
  for (const e of endpoints) if (e.breaker.allows(now)) return true;
  return false;
}

/**
 * The fallback that takes a request to `model`, or null to keep it there: the first with room that
 * this key may use and whose limits the request is within. Nothing is made unless the model has
 * fallbacks (this runs on every request).
 */
export function fallbackFor(registry: EndpointRegistry, model: string, endpoints: readonly Endpoint[], key: KeyInfo, path: string, body: Record<string, unknown>, route: string): string | null {
  const fallbacks = registry.fallbacks(model);
  if (fallbacks.length === 0) return null;
  const band = bandOf(key.band);
  const now = Date.now();
  if (hasRoom(endpoints, band, now)) return null;
  for (const f of fallbacks) if (hasRoom(registry.endpoints(f), band, now) && allowed(registry, key, f, path, body, route)) return f;
  return null;
}

function allowed(registry: EndpointRegistry, key: KeyInfo, f: string, path: string, body: Record<string, unknown>, route: string): boolean {
  if (!modelAllowed(key.models, f)) return false;
  try {
    checkRequestLimits(path, body, registry.limits(f), f, route);
    return true;
  } catch {
    return false;
  }
}
