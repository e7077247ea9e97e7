// Sends a request to a replica and the answer back to the client. A connection failure or a 5xx
// before the first byte is retried on another replica; once bytes have reached the client, never.
import type { Request, Response } from "express";
import { ApiError } from "../client-api/errors.ts";
import { pick, recordFailure, recordSuccess } from "./pick.ts";
import type { Endpoint } from "./registry.ts";
import { SseUsageScanner, type Usage } from "./sse-usage.ts";

const MAX_ATTEMPTS = 3;

export interface ProxyOutcome {
  status: number;
  endpoint: Endpoint | null;
  usage: Usage | null;
  ttftMs: number | null;
}

export interface ProxyRequest {
  path: string;
  body: Record<string, unknown>;
  stream: boolean;
  /** The client asked for a usage chunk at the end of its stream. */
  clientWantsUsage: boolean;
  requestId: string;
  started: number;
}

export async function proxy(req: Request, res: Response, endpoints: Endpoint[], p: ProxyRequest): Promise<ProxyOutcome> {
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.on("close", onClose);
  const payload = JSON.stringify(p.stream ? { ...p.body, stream_options: { ...(p.body.stream_options as object), include_usage: true } } : p.body);
  const tried = new Set<string>();
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const e = pick(endpoints, tried);
      if (!e) break;
      tried.add(e.id);
      e.inflight++;
      let up;
      try {
        up = await e.pool.request({
          path: p.path,
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": p.requestId },
          body: payload,
          signal: abort.signal,
        });
      } catch {
        e.inflight--;
        if (abort.signal.aborted) return { status: 499, endpoint: e, usage: null, ttftMs: null };
        recordFailure(e);
        continue;
      }
      if (up.statusCode >= 500) {
        e.inflight--;
        recordFailure(e);
        await up.body.dump().catch(() => undefined);
        continue;
      }
      recordSuccess(e);
      try {
        return await relay(res, e, up, p);
      } finally {
        e.inflight--;
      }
    }
  } finally {
    res.off("close", onClose);
  }
  throw new ApiError("unavailable", tried.size ? "every replica of this model failed to answer; try again" : "no replica of this model is ready", {
    retryAfterS: 1,
  });
}

type UpstreamResponse = Awaited<ReturnType<Endpoint["pool"]["request"]>>;

async function relay(res: Response, e: Endpoint, up: UpstreamResponse, p: ProxyRequest): Promise<ProxyOutcome> {
  const ctype = String(up.headers["content-type"] ?? "application/json");
  const requestHeaders = { "x-request-id": p.requestId, "x-llmgw-replica": e.id };
  if (!p.stream || up.statusCode !== 200 || !ctype.startsWith("text/event-stream")) {
    const text = await up.body.text();
    const ttftMs = performance.now() - p.started;
    res.status(up.statusCode).set({ "content-type": ctype, ...requestHeaders }).send(text);
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
    for await (const chunk of up.body) {
      ttftMs ??= performance.now() - p.started;
      const out = scanner.push(chunk.toString("utf8"));
      if (out) res.write(out);
    }
    const rest = scanner.end();
    if (rest) res.write(rest);
    res.end();
  } catch {
    // The client left (we aborted the engine's request) or the engine broke off: end what we sent.
    res.end();
    return { status: 499, endpoint: e, usage: scanner.usage, ttftMs };
  }
  return { status: 200, endpoint: e, usage: scanner.usage, ttftMs };
}
