// What the router keeps per served model and per replica: an endpoint (a replica of ours or an
// outside provider's key) with its live load, the model's group, and what the catalog says of it.
// The registry (registry.ts) fills them; pick, proxy, fallbacks and the admin API's explain read them.
import type { Pool } from "undici";
import type { Admission } from "./admission.ts";
import type { Affinity } from "./affinity.ts";
import type { Breaker } from "./breaker.ts";
import type { BusyClock } from "./busy-clock.ts";
import type { SmoothedTtft } from "./ttft.ts";

/** What the proxy needs to send a request to an outside provider with one key. */
export interface OutsideTarget {
  provider: string;
  /** The model's id upstream: the body's `model` is rewritten to it. */
  model: string;
  /** The base URL's path without its trailing slash (`/v1`): the client's path after /v1 is added. */
  pathPrefix: string;
  authorization: string;
  keyRef: string;
  /** Answers 401/403 (the key was refused) and 429 (the key is at its limit), for the metrics. */
  refused: number;
  limited: number;
}

/** Shares of a model's traffic per version while a canary runs (version-weights.ts draws by them). */
export type VersionWeights = Readonly<Record<string, number>>;

export interface Endpoint {
  id: string;
  model: string;
  version: string;
  nodeId: string;
  url: string;
  pool: Pool;
  /** Requests this gateway has on the replica now. */
  inflight: number;
  /** Requests the replica runs at once (setting): admission queues when every replica is full. */
  slots: number;
  /** The engine's own figures (all gateways' load), scraped every second; scrapedAt 0 = never. */
  running: number;
  waiting: number;
  kvCacheUsage: number;
  scrapedAt: number;
  ttft: SmoothedTtft;
  breaker: Breaker;
  group: ModelGroup;
  /** Share against the model's other endpoints when they are equally good: 1 for a replica, an outside key's weight. */
  weight: number;
  /** An outside provider's key (providers.ts); null for a replica of our own. */
  outside: OutsideTarget | null;
  /** `Bearer <the replica's engine key>`, sent on every request and scrape (its engine demands it); "" for outside providers (their key is in `outside`). */
  engineAuth: string;
  /** The GPUs the replica holds (its placement); 0 for a replica on no GPU and for outside providers. */
  gpus: number;
  /** The replica's processor-sharing clock: a request's share of the engine's busy time (busy-clock.ts). */
  busy: BusyClock;
}

/** A served model: its replicas and what routing keeps for all of them. */
export interface ModelGroup {
  model: string;
  endpoints: Endpoint[];
  admission: Admission;
  affinity: Affinity;
  /** Shares of traffic per version while a canary runs; null: by load alone. */
  weights: VersionWeights | null;
  /** Some endpoint's weight is not 1 (outside keys): pick breaks ties by weight, not in turn. */
  weighted: boolean;
}

/** What the catalog says of one version: the longest prompt plus answer, and the longest answer. */
export interface VersionLimits {
  contextLength: number;
  maxOutput: number;
}

/** A catalog model as the client API describes it (/v1/models) and holds requests to. */
export interface CatalogModel {
  name: string;
  owner: string;
  licence: string | null;
  createdAt: number;
  /** By version name; `newest` is the one a model with no ready replica is described by. */
  versions: Map<string, VersionLimits>;
  newest: string | null;
  /** Models a request goes to, in order, when this one has no room (fallback.ts). */
  fallbacks: readonly string[];
  /** 0: on demand, a request wakes it (gateway/router/wake.ts). */
  minReplicas: number;
  /** How long a request waits for it to wake; null: LLMGW_WAKE_WAIT_MS. */
  wakeWaitMs: number | null;
  /** A published LoRA adapter: the model whose replicas serve it (they are asked for it by this name). */
  adapterOf?: string;
}
