// POST /api/v1/explain: runs the router's choice on a request body without sending it, and says
// which replicas were candidates, each one's score and why the winner won. Staff only (admin
// token); nothing is changed: no slot is taken, no affinity remembered, no breaker touched.
import { Router } from "express";
import { z } from "zod";
import { routeHints } from "../router/proxy.ts";
import { crowded, fastEnoughOf, kvUsageOf, PROFILES, scoreOf, stickyOf, usable, waitingOf, type RouteHints } from "../router/pick.ts";
import { BANDS } from "../router/admission.ts";
import type { Endpoint } from "../router/endpoint.ts";
import type { EndpointRegistry } from "../router/registry.ts";
import { AdminError, check } from "./errors.ts";

export const explainBody = z
  .object({
    model: z.string().min(1),
    profile: z.enum(PROFILES).default("chat"),
    /** As the x-llmgw-session header would give it. */
    session: z.string().min(1).optional(),
    user: z.string().min(1).optional(),
    messages: z.array(z.object({ role: z.string(), content: z.unknown() }).loose()).optional(),
    prompt: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .loose();

export interface Candidate {
  id: string;
  version: string;
  node: string;
  inflight: number;
  slots: number;
  /** The engine's queue from its last scrape (0 when older than the staleness limit). */
  waiting: number;
  kvCacheUsage: number;
  ttftMs: number;
  breaker: string;
  usable: boolean;
  /** Lower wins; null for a replica the breaker keeps out. */
  score: number | null;
  /** Affinity points here (session or prompt beginning). */
  affinity: boolean;
}

export interface Explanation {
  model: string;
  profile: RouteHints["profile"];
  session: string | null;
  prefix: string | null;
  admission: { enabled: boolean; waiting: Record<string, number>; holding: Record<string, number> } | null;
  versionWeights: Record<string, number> | null;
  candidates: Candidate[];
  chosen: string | null;
  reason: string;
}

export function explain(registry: EndpointRegistry, body: z.output<typeof explainBody>): Explanation {
  const headers: Record<string, string> = { "x-llmgw-profile": body.profile };
  if (body.session) headers["x-llmgw-session"] = body.session;
  const hints = routeHints(headers, body);
  const endpoints = registry.endpoints(body.model);
  const group = endpoints[0]?.group;
  const now = Date.now();
  const none = new Set<string>();
  const remembered = group && hints.profile === "chat" ? ((hints.session !== null ? group.affinity.session(hints.session) : undefined) ?? (hints.prefix !== 0 ? group.affinity.prefix(hints.prefix) : undefined)) : undefined;
  const fastEnough = fastEnoughOf(endpoints, hints, now);
  const candidates: Candidate[] = endpoints.map((e) => ({
    id: e.id,
    version: e.version,
    node: e.nodeId,
    inflight: e.inflight,
    slots: e.slots,
    waiting: waitingOf(e, now),
    kvCacheUsage: kvUsageOf(e, now),
    ttftMs: Math.round(e.ttft.get(now) * 10) / 10,
    breaker: e.breaker.state,
    usable: usable(e, none, now),
    score: usable(e, none, now) ? scoreOf(e, hints, fastEnough, now) : null,
    affinity: e.id === remembered,
  }));
  const sticky = stickyOf(endpoints, none, hints, group?.affinity ?? null, now);
  let chosen: Endpoint | null = sticky;
  let reason: string;
  if (endpoints.length === 0) reason = registry.known(body.model) ? "no replica of this model is ready" : `model '${body.model}' does not exist`;
  else if (sticky) reason = `affinity: ${sticky.id} served this ${hints.session !== null && group!.affinity.session(hints.session) === sticky.id ? "session" : "prompt beginning"} last and has room, so its prefix cache is warm`;
  else {
    chosen = lowest(endpoints, candidates);
    const lost = remembered === undefined ? "" : `affinity pointed at ${remembered}, but it is ${whyNot(endpoints.find((e) => e.id === remembered), now)}; `;
    reason = chosen ? `${lost}${scoreRule(hints.profile)}: ${chosen.id} has the lowest score` : `${lost}every replica's breaker is open`;
    if (chosen && candidates.filter((c) => c.score === candidates.find((x) => x.id === chosen!.id)!.score).length > 1) reason += " (tied: ties are taken in turn)";
  }
  return {
    model: body.model,
    profile: hints.profile,
    session: hints.session,
    prefix: hints.prefix !== 0 ? hints.prefix.toString(16).padStart(8, "0") : null,
    admission: group
      ? {
          enabled: group.admission.enabled,
          waiting: Object.fromEntries(BANDS.map((b) => [b, group.admission.waiting(b)])),
          holding: Object.fromEntries(BANDS.map((b) => [b, group.admission.holding(b)])),
        }
      : null,
    versionWeights: group?.weights ? { ...group.weights } : null,
    candidates,
    chosen: chosen?.id ?? null,
    reason,
  };
}

function lowest(endpoints: Endpoint[], candidates: Candidate[]): Endpoint | null {
  let best = -1;
  for (let i = 0; i < candidates.length; i++) {
    const s = candidates[i]!.score;
    if (s !== null && (best < 0 || s < candidates[best]!.score!)) best = i;
  }
  return best < 0 ? null : endpoints[best]!;
}

function whyNot(e: Endpoint | undefined, now: number): string {
  if (!e) return "gone";
  if (!usable(e, new Set(), now)) return `out (breaker ${e.breaker.state})`;
  return crowded(e, now) ? "full" : "not chosen";
}

function scoreRule(profile: RouteHints["profile"]): string {
  if (profile === "batch") return "batch scores the queue (in flight + waiting)";
  if (profile === "long-context") return "long-context scores free KV cache, then the queue";
  return "chat scores (queue + 1) × time to first token (TTFTs within 25 % + 5 ms of the fastest count as equal)";
}

export function explainRoutes(registry: EndpointRegistry): Router {
  const r = Router();
  r.post("/explain", (req, res) => {
    const body = check(explainBody, req.body ?? {});
    if (!registry.known(body.model) && registry.endpoints(body.model).length === 0) throw new AdminError(404, `model '${body.model}' does not exist`, "model");
    res.json(explain(registry, body));
  });
  return r;
}
