// The gateway's Prometheus metrics, served on their own port. Counters and histograms are observed
// where things happen (client-api/forward.ts, router/proxy.ts); gauges of state (queues, replicas,
// breakers, the key cache, usage events) are read from the live objects at scrape time, so the
// hot path pays nothing for them.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { collectProcessMetrics } from "../common/metrics-server.ts";
import type { KeyCache } from "./auth/key-cache.ts";
import { BANDS } from "./router/admission.ts";
import type { EndpointRegistry } from "./router/registry.ts";
import type { UsageRecorder } from "./usage/recorder.ts";

const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60];
const TPOT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64];
const BREAKER_VALUE = { closed: 0, "half-open": 1, open: 2 } as const;

/** What one answered request tells the metrics besides its status and latency. */
export interface RequestFigures {
  band?: string;
  ttftMs?: number | null;
  promptTokens?: number;
  completionTokens?: number;
}

interface ModelSeries {
  latency: Histogram.Internal<"model">;
  ttft: Histogram.Internal<"model">;
  tpot: Histogram.Internal<"model">;
  tokensIn: Counter.Internal;
  tokensOut: Counter.Internal;
}

/** The live objects the scrape-time gauges read. */
export interface GatewayState {
  registry: EndpointRegistry;
  usage: UsageRecorder;
  keys: KeyCache;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private requests = new Counter({ name: "llmgw_requests_total", help: "Client API requests by model, status and band", labelNames: ["model", "status", "band"], registers: [this.registry] });
  private latency = new Histogram({ name: "llmgw_request_duration_seconds", help: "Client API request latency by model", labelNames: ["model"], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private ttft = new Histogram({ name: "llmgw_time_to_first_token_seconds", help: "Time from the request to the first byte of the answer, by model", labelNames: ["model"], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private tpot = new Histogram({ name: "llmgw_time_per_output_token_seconds", help: "Time per output token after the first, by model", labelNames: ["model"], buckets: TPOT_BUCKETS, registers: [this.registry] });
  private tokens = new Counter({ name: "llmgw_tokens_total", help: "Tokens by model and direction (in: prompt, out: completion)", labelNames: ["model", "direction"], registers: [this.registry] });
  private queueWait = new Histogram({ name: "llmgw_queue_wait_seconds", help: "Time a request waited for a replica slot, by band", labelNames: ["band"], buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120], registers: [this.registry] });
  private refusals = new Counter({ name: "llmgw_rate_limit_refusals_total", help: "Requests refused by a rate limit, concurrency limit or budget, by model and reason", labelNames: ["model", "reason"], registers: [this.registry] });
  private state: GatewayState | null = null;
  private readonly modelSeries = new Map<string, ModelSeries>();
  private readonly requestSeries = new Map<string, Counter.Internal>();

  constructor() {
    collectProcessMetrics(this.registry, "llmgw_gateway_");
    const current = () => this.state;
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, s: GatewayState) => void) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          this.reset();
          const s = current();
          if (s) fill(this, s);
        },
      });
    // A count kept by the object itself (it has no prom-client), exported as a counter.
    const counter = (name: string, help: string, read: (s: GatewayState) => number) =>
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          const s = current();
          if (s) this.inc(read(s));
        },
      });
    const eachReplica = (s: GatewayState, f: (model: string, e: ReturnType<EndpointRegistry["endpoints"]>[number]) => void) => {
      for (const m of s.registry.servedModels()) for (const e of s.registry.endpoints(m)) f(m, e);
    };
    gauge("llmgw_queue_depth", "Requests waiting for a replica slot, by model and band", ["model", "band"], (g, s) => {
      for (const m of s.registry.servedModels()) {
        const group = s.registry.endpoints(m)[0]?.group;
        if (group) for (const b of BANDS) g.set({ model: m, band: b }, group.admission.waiting(b));
      }
    });
    gauge("llmgw_replicas_ready", "Ready replicas in this gateway's router, by model", ["model"], (g, s) => {
      // Outside providers' keys are endpoints too, but not replicas.
      for (const m of s.registry.servedModels()) g.set({ model: m }, s.registry.endpoints(m).filter((e) => e.outside === null).length);
    });
    gauge("llmgw_replica_inflight", "Requests this gateway has on a replica now", ["model", "replica"], (g, s) => eachReplica(s, (m, e) => g.set({ model: m, replica: e.id }, e.inflight)));
    gauge("llmgw_replica_engine_running", "Requests the engine reports running (its last scrape)", ["model", "replica"], (g, s) => eachReplica(s, (m, e) => g.set({ model: m, replica: e.id }, e.running)));
    gauge("llmgw_replica_engine_waiting", "Requests the engine reports waiting (its last scrape)", ["model", "replica"], (g, s) => eachReplica(s, (m, e) => g.set({ model: m, replica: e.id }, e.waiting)));
    gauge("llmgw_replica_kv_cache_usage_ratio", "KV cache in use on the replica, 0..1 (its last scrape)", ["model", "replica"], (g, s) => eachReplica(s, (m, e) => g.set({ model: m, replica: e.id }, e.kvCacheUsage)));
    // Outside providers' keys (router/providers.ts) are endpoints too: their refusals, counted on the endpoint.
    new Counter({
      name: "llmgw_outside_key_refusals_total",
      help: "Answers of an outside provider refusing a key (reason refused: 401/403, the key is taken out) or holding it at its limit (reason limited: 429), by model and endpoint",
      labelNames: ["model", "endpoint", "reason"],
      registers: [this.registry],
      collect() {
        this.reset();
        const s = current();
        if (!s) return;
        eachReplica(s, (m, e) => {
          if (!e.outside) return;
          this.inc({ model: m, endpoint: e.id, reason: "refused" }, e.outside.refused);
          this.inc({ model: m, endpoint: e.id, reason: "limited" }, e.outside.limited);
        });
      },
    });
    gauge("llmgw_replica_breaker_state", "A replica's circuit breaker: 0 closed, 1 half-open, 2 open", ["model", "replica"], (g, s) =>
      eachReplica(s, (m, e) => g.set({ model: m, replica: e.id }, BREAKER_VALUE[e.breaker.state])),
    );
    gauge("llmgw_key_cache_entries", "API keys held in the key cache (known and unknown)", [], (g, s) => g.set(s.keys.size()));
    gauge("llmgw_usage_events_pending", "Usage events buffered in this gateway, not yet queued", [], (g, s) => g.set(s.usage.pending()));
    counter("llmgw_usage_events_enqueued_total", "Usage events queued to BullMQ", (s) => s.usage.enqueued);
    counter("llmgw_usage_events_dropped_total", "Usage events lost before reaching the queue; must stay 0 (the recorder keeps what it cannot send)", (s) => s.usage.dropped);
    counter("llmgw_key_cache_hits_total", "Key lookups answered from the cache", (s) => s.keys.hits);
    counter("llmgw_key_cache_misses_total", "Key lookups that read the store", (s) => s.keys.misses);
  }

  /** Lets the scrape-time gauges read the gateway's live state. */
  watch(state: GatewayState): void {
    this.state = state;
  }

  observe(model: string, status: number, seconds: number, f: RequestFigures = {}): void {
    const band = f.band || "interactive";
    const key = `${model}\0${status}\0${band}`;
    let counted = this.requestSeries.get(key);
    if (!counted) this.requestSeries.set(key, (counted = this.requests.labels({ model, status: String(status), band })));
    counted.inc();
    const m = this.seriesOf(model);
    m.latency.observe(seconds);
    if (status !== 200) return;
    const out = f.completionTokens ?? 0;
    if (f.promptTokens) m.tokensIn.inc(f.promptTokens);
    if (out) m.tokensOut.inc(out);
    if (f.ttftMs != null) {
      m.ttft.observe(f.ttftMs / 1000);
      if (out > 1) m.tpot.observe(Math.max(0, seconds - f.ttftMs / 1000) / (out - 1));
    }
  }

  /** A model's labelled series, made once: labels() builds a new child each call (prom-client still checks and hashes the labels on each observe). */
  private seriesOf(model: string): ModelSeries {
    let m = this.modelSeries.get(model);
    if (!m) {
      m = {
        latency: this.latency.labels({ model }),
        ttft: this.ttft.labels({ model }),
        tpot: this.tpot.labels({ model }),
        tokensIn: this.tokens.labels({ model, direction: "in" }),
        tokensOut: this.tokens.labels({ model, direction: "out" }),
      };
      this.modelSeries.set(model, m);
    }
    return m;
  }

  queued(band: string, seconds: number): void {
    this.queueWait.observe({ band }, seconds);
  }

  refused(model: string, reason: string): void {
    this.refusals.inc({ model, reason });
  }
}
