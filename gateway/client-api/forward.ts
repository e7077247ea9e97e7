// What every inference route does once its body is checked, whatever API it speaks: may this key
// use the model, is it served, proxy to a replica, record one usage event and the metrics.
import type { ServerResponse } from "node:http";
import { log } from "../../common/logging.ts";
import { modelAllowed } from "../auth/key-cache.ts";
import { fallbackFor } from "../router/fallback.ts";
import { proxy, type ProxyOutcome, type ProxyRequest } from "../router/proxy.ts";
import { refusedAnswers } from "../router/answer-rewrite.ts";
import type { Caller, ClientApiDeps } from "./context.ts";
import { ApiError } from "../errors.ts";
import { checkRequestLimits } from "../router/request-limits.ts";
import { countPrompt } from "../router/prompt-count.ts";
import { answerRewrite } from "../guard/answer.ts";
import { checkInput, GuardBlock } from "../guard/input.ts";
import { asker, bodyTexts, judgeInput } from "../guard/judge-stage.ts";
import { askedRewrite } from "../guard/output-asks.ts";
import type { MergedPolicy } from "../guard/merge.ts";
import type { GuardService } from "../guard/service.ts";
import type { KeyInfo } from "../auth/key-cache.ts";
import { usageRow } from "../usage/usage-row.ts";
import type { Spent } from "../auth/limiter.ts";
import { AnswerCapture, replay } from "../cache/answer.ts";
import type { CacheLookup } from "../cache/answer-cache.ts";
import { holdEnd } from "../usage/hold-end.ts";
import type { BatchLineClaim } from "./batch-line-once.ts";
import type { Endpoint } from "../router/endpoint.ts";

/**
 * Throws an ApiError when the request cannot be served; the caller hands it to the error handler.
 * `route` is the client's route as the ledger records it (its `endpoint`); the engine's path may differ (/v1/messages).
 */
export async function forward(deps: ClientApiDeps, req: Caller, res: ServerResponse, model: string, p: Omit<ProxyRequest, "requestId">, route = p.path): Promise<void> {
  const key = req.key!;
  if (!modelAllowed(key.models, model)) {
    throw new ApiError("permission", `this key may not use model '${model}'`, { param: "model", code: "model_not_allowed" });
  }
  let endpoints = deps.registry.endpoints(model);
  // An on-demand model asleep is woken (gateway/router/wake.ts). A fallback with room answers
  // meanwhile; without one the request is held until the model is up.
  let early: string | null = null;
  if (endpoints.length === 0 && deps.waker) {
    early = fallbackFor(deps.registry, model, endpoints, key, p.path, p.body, route);
    if (early === null) endpoints = await deps.waker.awaitReplicas(model);
    else deps.waker.wakeWithoutWaiting(model);
  }
  deps.waker?.touch(model);
  if (endpoints.length === 0 && deps.registry.fallbacks(model).length === 0) {
    if (!deps.registry.known(model)) throw new ApiError("not_found", `model '${model}' does not exist`, { param: "model", code: "model_not_found" });
    throw new ApiError("unavailable", `model '${model}' is not being served right now`, { code: "model_not_ready", retryAfterS: 5 });
  }
  const limits = deps.registry.limits(model);
  const counted = deps.tokens ? await countPrompt(deps.tokens, p.path, p.body, limits, endpoints) : undefined;
  if (counted) res.setHeader("x-llmgw-token-count", counted.exact ? "exact" : "estimate");
  checkRequestLimits(p.path, p.body, limits, model, route, counted);
  // A batch line already answered gets that answer again, before limits or an engine see it.
  if (key.batchId === undefined || !deps.batchLines) return forwardClaimed(deps, req, res, model, p, route, endpoints, early, null);
  const c = await deps.batchLines.claim(key.batchId, req.requestId!);
  if ("answer" in c) {
    res.writeHead(c.answer.status, { "content-type": "application/json", "content-length": Buffer.byteLength(c.answer.body), "x-request-id": req.requestId!, "x-llmgw-batch-replay": "1" });
    res.end(c.answer.body);
    return;
  }
  const line = c.claimed;
  try {
    await forwardClaimed(deps, req, res, model, p, route, endpoints, early, line);
  } finally {
    line.release();
  }
}

async function forwardClaimed(deps: ClientApiDeps, req: Caller, res: ServerResponse, model: string, p: Omit<ProxyRequest, "requestId">, route: string, endpoints: Endpoint[], early: string | null, line: BatchLineClaim | null): Promise<void> {
  const key = req.key!;
  const limited = await deps.limits.admit(key);
  if (limited.refused) {
    deps.metrics.refused(model, limited.refused.opts.code ?? "rate_limit");
    throw limited.refused;
  }
  let status = 500;
  let ttftMs: number | null = null;
  let replica: string | null = null;
  let spent: Spent = { promptTokens: 0, completionTokens: 0, costMicros: 0 };
  // The key's or project's answer cache (gateway/cache/): undefined for most, at the cost of a map lookup.
  const cacheSettings = deps.cache?.book.for(key);
  let cached: CacheLookup | null = null;
  // The answer's end waits for its usage to be journaled: a gateway killed after it loses no row.
  const held = holdEnd(res);
  /** Records the request's usage event (with a batch line's kept answer), waiting until it is journaled. */
  const bill = async (out: Pick<ProxyOutcome, "endpoint" | "usage" | "ttftMs" | "gpuSeconds">, status: number, answer: string | null = null): Promise<void> => {
    const recorded = deps.usage.record(usageRow(key, model, route, p.started, {
      version: out.endpoint?.version ?? null,
      replicaId: out.endpoint?.id ?? null,
      // A rerank's usage has total_tokens alone (vLLM's shape): all of it is input.
      promptTokens: out.usage?.prompt_tokens ?? out.usage?.total_tokens ?? 0,
      cachedTokens: Math.min(out.usage?.prompt_tokens_details?.cached_tokens ?? 0, out.usage?.prompt_tokens ?? 0),
      completionTokens: out.usage?.completion_tokens ?? 0,
      ttftMs: out.ttftMs,
      status,
      gpuSeconds: out.gpuSeconds ?? 0,
      batchId: key.batchId ?? null,
      ...(cached ? { cache: cached.outcome } : {}),
    }), answer !== null ? line!.keep(status, answer) : undefined);
    spent = recorded.event;
    await recorded.journaled;
  };
  try {
    const asked = p.body;
    // guard(input): before the route is picked, so a blocked request never reaches an engine.
    const policy = deps.guard?.policyFor(key, model) ?? null;
    if (policy !== null) {
      p = guardRequest(deps.guard!, policy, req, key, model, p);
      if (policy.asks) await judgeInput(deps.guard!, policy, p.body, key, model, req.requestId);
    }
    // The cache after the guard has judged the request; a redacted request is neither served nor kept.
    let capture: AnswerCapture | null = null;
    if (cacheSettings !== undefined && p.body === asked) {
      cached = await deps.cache!.lookup(cacheSettings, route, p.body);
      if (cached?.answer) {
        replay(res, cached.answer, cached.outcome as "hit" | "similar", req.requestId!);
        status = 200;
        const recorded = deps.usage.record(usageRow(key, model, route, p.started, { status: 200, cache: cached.outcome }));
        spent = recorded.event;
        await recorded.journaled;
        return;
      }
      if (cached) {
        res.setHeader("x-llmgw-cache", "miss");
        capture = new AnswerCapture(res);
      }
    }
    // No room or no ready endpoint: the first fallback with room takes the request (router/fallback.ts).
    const fallback = early ?? fallbackFor(deps.registry, model, endpoints, key, p.path, p.body, route);
    if (fallback !== null) {
      [model, endpoints, p] = [fallback, deps.registry.endpoints(fallback), { ...p, body: { ...p.body, model: fallback }, raw: undefined }];
      res.setHeader("x-llmgw-fallback", fallback);
    }
    const out = await proxy(req, res, endpoints, { ...p, requestId: req.requestId!, band: key.band, onQueued: (b, s) => deps.metrics.queued(b, s) });
    status = out.status;
    // Kept only when the model asked answered it whole (not a fallback, not a client gone mid-stream).
    const cacheable = capture !== null && out.status === 200 && fallback === null ? capture.answer() : null;
    if (cacheable !== null) deps.cache!.keep(cached!, cacheable);
    ttftMs = out.ttftMs;
    replica = out.endpoint?.id ?? null;
    // A batch line's final answer is kept with its usage event (batch-line-once.ts); 429 and 5xx are tried again.
    await bill(out, status, line && status < 500 && status !== 429 && status !== 499 ? held.body() : null);
  } catch (err) {
    status = err instanceof ApiError ? err.status : 500;
    // An answer refused after the engine made it (a guardrail's output block): its tokens are billed all the same.
    const refused = err !== null && typeof err === "object" ? refusedAnswers.get(err) : undefined;
    if (refused) {
      ttftMs = refused.ttftMs;
      replica = refused.endpoint?.id ?? null;
      await bill(refused, status).catch(() => undefined);
    }
    throw err;
  } finally {
    held.release();
    limited.release(spent);
    const seconds = (performance.now() - p.started) / 1000;
    deps.metrics.observe(model, status, seconds, { band: key.band, ttftMs, ...spent });
    // One line per request, with its id and never its text: debug when it went well.
    const line = { requestId: req.requestId, model, status, replica, band: key.band, ms: Math.round(seconds * 1000), in: spent.promptTokens, out: spent.completionTokens };
    if (status >= 500) log.warn("request failed", line);
    else log.debug("request", line);
  }
}


/**
 * The input rules applied (a block is recorded and thrown; a redacted body is sent re-serialised),
 * and the answer's rewrite set when it restores or has output rules to read it.
 */
function guardRequest(guard: GuardService, policy: MergedPolicy, req: Caller, key: KeyInfo, model: string, p: Omit<ProxyRequest, "requestId">): Omit<ProxyRequest, "requestId"> {
  let out = null;
  if (policy.input.length > 0) {
    try {
      out = checkInput(policy, p.body);
    } catch (err) {
      if (err instanceof GuardBlock) {
        guard.record(err.decisions, key, model);
        throw err;
      }
      // A detector failed (a fault of ours, not the request's): `fail` decides, as it will for a judge's timeout.
      log.error("a guardrail check failed", { requestId: req.requestId, policies: policy.policies.join(","), fail: policy.fail, error: err as Error });
      if (policy.fail === "closed") throw new ApiError("unavailable", "the guardrail check failed and this policy fails closed; try again", { code: "guard_failed", retryAfterS: 1 });
    }
    if (out) guard.record(out.decisions, key, model);
  }
  const checked = answerRewrite(policy, out?.redactions ?? null, (d) => guard.record(d, key, model));
  // The output's judge and service rules read the answer after the pattern rules (a judge also reads the request it answers).
  const rewrite = checked && policy.outputAsks ? askedRewrite(checked, asker(guard, policy, "output", key, model, req.requestId, bodyTexts(out?.body ?? p.body))) : checked;
  if (out && out.body !== p.body) return { ...p, body: out.body, raw: undefined, rewrite };
  return rewrite ? { ...p, rewrite } : p;
}
