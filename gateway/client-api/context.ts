// What every client-API handler is given: the gateway's parts (ClientApiDeps) and the request as
// it stands once authenticated (Caller on the plain hot path, Authed inside express), with its id.
// Kept apart from app.ts and forward.ts so route modules can name them without importing either.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Request, Router } from "express";
import type { BatchKeys } from "../auth/batch-keys.ts";
import type { BatchLines } from "./batch-line-once.ts";
import type { KeyCache, KeyInfo } from "../auth/key-cache.ts";
import type { Limiter } from "../auth/limiter.ts";
import type { GatewayMetrics } from "../metrics.ts";
import type { EndpointRegistry } from "../router/registry.ts";
import type { Waker } from "../router/wake.ts";
import type { TokenCounter } from "../router/token-count.ts";
import type { JobsDeps } from "../jobs/service.ts";
import type { UsageRecorder } from "../usage/recorder.ts";
import type { ResponseStore } from "./responses/store.ts";
import type { GuardService } from "../guard/service.ts";
import type { ScimDeps } from "../scim/effects.ts";
import type { AnswerCache } from "../cache/answer-cache.ts";

export interface ClientApiDeps {
  keys: KeyCache;
  limits: Limiter;
  registry: EndpointRegistry;
  usage: UsageRecorder;
  metrics: GatewayMetrics;
  bodyLimitBytes: number;
  /** Wakes on-demand models and notes their last request; without it they answer 503 while asleep. */
  waker?: Waker;
  /** Exact token counts from the engines' tokenizers; without it prompts are estimated (4 characters a token). */
  tokens?: TokenCounter;
  /** Guardrail policies (gateway/guard/); without it no request is checked. */
  guard?: GuardService;
  /** The job routes need the store and Temporal; without them they are not served. */
  jobs?: JobsDeps;
  /** Batch credentials, taken on the inference routes only (the hot path): a batch's lines arrive with one. */
  batchKeys?: BatchKeys;
  /** Batch lines answered once (./batch-line-once.ts); without it a line sent twice runs twice. */
  batchLines?: BatchLines;
  /** Stored /v1/responses answers; without it nothing is kept and previous_response_id is refused. */
  responses?: ResponseStore;
  /** The answer cache of the projects that have one (gateway/cache/); without it nothing is cached. */
  cache?: AnswerCache;
  /** Sign-in under /auth (./auth-routes.ts); without it no sign-in route is served. */
  auth?: Router;
  /** SCIM provisioning under /scim/v2 (gateway/scim/); without it those paths are 404s. */
  scim?: ScimDeps;
}

/** An authenticated request inside express. */
export type Authed = Request & { key?: KeyInfo; requestId?: string };
/** An authenticated request on either path: express's (Authed) or the plain hot path's. */
export type Caller = IncomingMessage & { key?: KeyInfo; requestId?: string; rawBody?: Buffer };

/** The client's x-request-id when it sent a usable one, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && given.length <= 128 ? given : randomUUID();
}
