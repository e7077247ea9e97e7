// Sends a request to a replica and the answer back to the client. A connection failure or a 5xx
// before the first byte is retried on another replica; once bytes have reached the client, never.
// An outside provider's key that is refused (401/403) or at its limit (429) is passed over the same way.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../errors.ts";
import { bandOf } from "./admission.ts";
import { prefixHash } from "./affinity.ts";
import { allKeysRefused, anotherUsable, isKeyRefusal, keyRefused } from "./provider-answers.ts";
import { outsidePath } from "./providers.ts";
import { pick, PROFILES, type Profile, type RouteHints } from "./pick.ts";
import type { Endpoint } from "./endpoint.ts";
import { SseUsageScanner, type Usage } from "./sse-usage.ts";
import { UpstreamCall } from "./upstream-call.ts";
import { refusedAnswers, rewriteAnswer, type AnswerRewrite } from "./answer-rewrite.ts";
import { byWeight } from "./version-weights.ts";

const MAX_ATTEMPTS = 3;

export interface ProxyOutcome {
  status: number;
  endpoint: Endpoint | null;
  usage: Usage | null;
  ttftMs: number | null;
  /** GPU time the request cost on our replicas: each attempt's share of its engine × its GPUs (busy-clock.ts). */
  gpuSeconds?: number;
}

export interface ProxyRequest {
  path: string;
  body: Record<string, unknown>;
  /** The client's body as it came, when `body` is that body unchanged: sent on as it is, not re-serialised. */
  raw?: Buffer;
  stream: boolean;
  /** The client asked for a usage chunk at the end of its stream. */
  clientWantsUsage: boolean;
  requestId: string;
  started: number;
  /** Writes the engine's answer in another API's shape (the Anthropic routes); by default it is relayed as it is. */
  respond?: Responder;
  /** A body not sent as JSON (an audio form): made from `body` (the model's name may change on a fallback or upstream). */
  encode?: (body: Record<string, unknown>) => { payload: Buffer; contentType: string };
  /** The key's admission band (KeyInfo.band); interactive when absent. */
  band?: string;
  /** Rewrites the engine's answer before it is relayed or translated (the guard's restore). */
  rewrite?: AnswerRewrite;
  /** Told how long the request waited for a slot when every replica was full (the queue metric). */
  onQueued?: (band: string, seconds: number) => void;
}

/** The routing profile (x-llmgw-profile, default chat) and affinity keys of a request. */
export function routeHints(headers: IncomingHttpHeaders, body: Record<string, unknown>): RouteHints {
  const given = headers["x-llmgw-profile"];
  const profile = (given ?? "chat") as Profile;
  if (!PROFILES.includes(profile)) {
    throw new ApiError("invalid_request", `x-llmgw-profile must be one of ${PROFILES.join(", ")}`, { param: "x-llmgw-profile", code: "invalid_profile" });
  }
  const header = headers["x-llmgw-session"];
  const session = typeof header === "string" && header ? header : typeof body.user === "string" && body.user ? body.user : null;
  return { profile, session, prefix: profile === "chat" ? prefixHash(body) : 0 };
}

export type Responder = (res: ServerResponse, e: Endpoint, up: UpstreamCall, p: ProxyRequest) => Promise<ProxyOutcome>;

/** Whether the client has gone, and what to stop when it goes: the call in flight or the wait for a slot. */
class ClientWatch {
  gone = false;
  call: UpstreamCall | null = null;
  private queueAbort: AbortController | null = null;
  readonly onClose: () => void;

  constructor(private readonly res: ServerResponse) {
    this.onClose = () => {
      if (this.res.writableFinished) return;
      this.gone = true;
      const reason = new Error("the client closed the connection");
      this.call?.abort(reason);
      this.queueAbort?.abort(reason);
    };
  }

  /** Made only for a request that queues: most never do, and an AbortController per request is garbage. */
  queueSignal(): AbortSignal {
    this.queueAbort ??= new AbortController();
    if (this.gone) this.queueAbort.abort();
    return this.queueAbort.signal;
  }
}

export async function proxy(req: IncomingMessage, res: ServerResponse, endpoints: Endpoint[], p: ProxyRequest): Promise<ProxyOutcome> {
  const hints = routeHints(req.headers, p.body);
  const group = endpoints[0]?.group;
  const band = bandOf(p.band);
  const client = new ClientWatch(res);
  res.on("close", client.onClose);
  let admitted = false;
  try {
    if (group) {
      if (!group.admission.tryAdmit(band)) {
        const queuedAt = performance.now();
        try {
          await group.admission.wait(band, client.queueSignal());
        } catch (err) {
          if (client.gone) return { status: 499, endpoint: null, usage: null, ttftMs: null };
          throw err;
        } finally {
          p.onQueued?.(band, (performance.now() - queuedAt) / 1000);
        }
      }
      admitted = true;
    }
    // `endpoints`, not the group's: for a LoRA adapter they are the base's own replicas only.
    return await tryReplicas(res, byWeight(endpoints, group?.weights ?? null), p, hints, client);
  } finally {
    if (admitted) group!.admission.release(band);
    res.off("close", client.onClose);
  }
}

/** Up to MAX_ATTEMPTS replicas in pick order: on to the next after a failed connection or a 5xx (or an outside key's refusal). */
async function tryReplicas(res: ServerResponse, endpoints: Endpoint[], p: ProxyRequest, hints: RouteHints, client: ClientWatch): Promise<ProxyOutcome> {
  const usageOption = { ...(p.body.stream_options as object), include_usage: true };
  // A rewrite that may end the stream needs the usage so far when it does: our engines send it in every chunk.
  const body = p.stream ? { ...p.body, stream_options: p.rewrite?.mayStop ? { ...usageOption, continuous_usage_stats: true } : usageOption } : p.body;
  const encoded = p.encode?.(body);
  const payload = encoded ? encoded.payload : body === p.body && p.raw ? p.raw : JSON.stringify(body);
  const contentType = encoded?.contentType ?? "application/json";
  // Outside providers get the body with their own model id, made once per request and model.
  let outsideModel: string | null = null;
  let outsidePayload: string | { payload: Buffer; contentType: string } = "";
  let refusals = 0;
  // Summed over attempts: a replica that failed mid-answer still ran the request for a while.
  let gpuSeconds = 0;
  const tried = new Set<string>();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    // Gone between attempts: the close listener aborted the previous call only.
    if (client.gone) return { status: 499, endpoint: null, usage: null, ttftMs: null, gpuSeconds };
    const now = Date.now();
    const e = pick(endpoints, tried, hints, endpoints[0]?.group.affinity ?? null, now);
    if (!e) break;
    tried.add(e.id);
    e.breaker.begin(now);
    e.inflight++;
    const sent = performance.now();
    const mark = e.busy.begin(sent);
    const o = e.outside;
    if (o !== null && o.model !== outsideModel) {
      outsideModel = o.model;
      // Outside providers are not asked for continuous usage (OpenAI refuses fields it does not know).
      const named = { ...body, model: o.model, ...(p.stream && { stream_options: usageOption }) };
      outsidePayload = p.encode ? p.encode(named) : JSON.stringify(named);
    }
    const up = new UpstreamCall(
      e.pool,
      o === null
        ? { path: p.path, method: "POST", headers: { "content-type": contentType, authorization: e.engineAuth, "x-request-id": p.requestId }, body: payload }
        : typeof outsidePayload === "string"
          ? { path: outsidePath(o, p.path), method: "POST", headers: { "content-type": "application/json", authorization: o.authorization }, body: outsidePayload }
          : { path: outsidePath(o, p.path), method: "POST", headers: { "content-type": outsidePayload.contentType, authorization: o.authorization }, body: outsidePayload.payload },
    );
    client.call = up;
    try {
      await up.head;
    } catch {
      e.inflight--;
      gpuSeconds += e.busy.end(mark) * e.gpus;
      if (client.gone) {
        e.breaker.abandon();
        return { status: 499, endpoint: e, usage: null, ttftMs: null, gpuSeconds };
      }
      e.breaker.failure(Date.now());
      continue;
    }
    if (up.statusCode >= 500) {
      e.inflight--;
      gpuSeconds += e.busy.end(mark) * e.gpus;
      e.breaker.failure(Date.now());
      await up.dump();
      continue;
    }
    if (o !== null && isKeyRefusal(up.statusCode)) {
      keyRefused(e, up.statusCode, up.headers, Date.now());
      // The last key at its limit: its 429 (and Retry-After) is the client's answer. Otherwise on to
      // another key; a refusal is not a failed attempt (`tried` still bounds the loop).
      if (up.statusCode !== 429 || anotherUsable(endpoints, tried, Date.now())) {
        e.inflight--;
        e.busy.end(mark); // an outside key: no GPUs of ours
        refusals++;
        attempt--;
        await up.dump();
        continue;
      }
    } else e.breaker.success();
    if (p.rewrite) rewriteAnswer(up, p.rewrite);
    let out: ProxyOutcome;
    let failed: unknown = null;
    try {
      out = await (p.respond ?? relay)(res, e, up, p);
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      e.inflight--;
      gpuSeconds += e.busy.end(mark) * e.gpus;
      // A whole answer the rewrite refused: the ledger records what this replica made.
      const refused = failed !== null && typeof failed === "object" ? refusedAnswers.get(failed) : undefined;
      if (refused) Object.assign(refused, { endpoint: e, gpuSeconds, ttftMs: performance.now() - p.started });
    }
    out.gpuSeconds = gpuSeconds;
    if (out.status === 200) {
      // The engine's own time to first token: from our send, not from the client's request.
      if (out.ttftMs !== null) e.ttft.observe(out.ttftMs - (sent - p.started), Date.now());
      e.group.affinity.served(hints.session, hints.prefix, e.id);
    }
    return out;
  }
  if ((refusals > 0 && refusals === tried.size) || (tried.size === 0 && allKeysRefused(endpoints))) {
    throw new ApiError("unavailable", "the outside provider refused every key this gateway holds for this model", { code: "outside_key_refused", retryAfterS: 5 });
  }
  throw new ApiError("unavailable", tried.size ? "every replica of this model failed to answer; try again" : "no replica of this model is ready", {
    retryAfterS: 1,
  });
}

async function relay(res: ServerResponse, e: Endpoint, up: UpstreamCall, p: ProxyRequest): Promise<ProxyOutcome> {
  const ctype = String(up.headers["content-type"] ?? "application/json");
  const requestHeaders = { "x-request-id": p.requestId, "x-llmgw-replica": e.id };
  if (!p.stream || up.statusCode !== 200 || !ctype.startsWith("text/event-stream")) {
    const text = await up.text();
    const ttftMs = performance.now() - p.started;
    // An engine's or outside provider's "come back later" reaches the client.
    if (up.statusCode >= 400 && up.headers["retry-after"] !== undefined) res.setHeader("retry-after", up.headers["retry-after"]);
    // Plain node, not express's send (charset, ETag and freshness work the gateway has no use for).
    res.writeHead(up.statusCode, { "content-type": ctype, "content-length": Buffer.byteLength(text), ...requestHeaders });
    res.end(text);
    let usage: Usage | null = null;
    if (up.statusCode === 200) {
      try {
        usage = (JSON.parse(text) as { usage?: Usage }).usage ?? null;
      } catch {
        usage = null;
      }
    }
    return { status: up.statusCode, endpoint: e, usage, ttftMs };
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...requestHeaders });
  res.flushHeaders();
  const scanner = new SseUsageScanner(p.clientWantsUsage);
  let ttftMs: number | null = null;
  try {
    await up.stream((text) => {
      ttftMs ??= performance.now() - p.started;
      const out = scanner.push(text);
      if (out) res.write(out);
    }, res);
    const rest = scanner.end();
    // One end call with the last bytes: the usage journal can hold them back (forward.ts).
    if (rest) res.end(rest);
    else res.end();
  } catch {
    // The client left (we aborted the engine's request) or the engine broke off: end what we sent.
    res.end();
    return { status: 499, endpoint: e, usage: scanner.usage, ttftMs };
  }
  return { status: 200, endpoint: e, usage: scanner.usage, ttftMs };
}
