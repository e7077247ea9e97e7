// On-demand models (catalog min_replicas 0): a request for one with no ready replica asks its entity
// workflow to wake it and waits, up to the model's wake_wait (else LLMGW_WAKE_WAIT_MS), for the
// change feed to bring a replica into the registry. Every request also notes, at most once a second
// per model, when the model was last used: the workflow's idle watch reads it to put the model to sleep.
import type { Client } from "@temporalio/client";
import type { Redis } from "ioredis";
import { Counter, Histogram, type Registry as MetricsRegistry } from "prom-client";
import { log } from "../../common/logging.ts";
import { askModelToWake, noteModelUse } from "../../common/model-wake.ts";
import { ApiError } from "../errors.ts";
import type { Endpoint } from "./endpoint.ts";
import type { EndpointRegistry } from "./registry.ts";

/** A model's last-request note is written at most this often by one gateway. */
const TOUCH_EVERY_MS = 1000;
/** While waiting, the wake is asked again this often (a wake that failed, a signal lost). */
const RESIGNAL_EVERY_MS = 10_000;
/** The registry is looked at this often besides the change feed's word (a reload after a reconnect). */
const RECHECK_MS = 1000;

export interface WakerOptions {
  temporal: Client;
  taskQueue: string;
  redis: Redis;
  registry: EndpointRegistry;
  metrics: MetricsRegistry;
  /** LLMGW_WAKE_WAIT_MS: how long a request waits when its model names no wake_wait of its own. */
  waitMs: number;
}

export class Waker {
  private touched = new Map<string, number>();
  private signalled = new Map<string, number>();
  private waiting = new Map<string, Set<() => void>>();
  private readonly wakes: Counter;
  private readonly waits: Histogram;

  constructor(private readonly o: WakerOptions) {
    this.wakes = new Counter({ name: "llmgw_model_wakes_total", help: "Wakes of on-demand models this gateway asked for, by model", labelNames: ["model"], registers: [o.metrics] });
    this.waits = new Histogram({
      name: "llmgw_wake_wait_seconds",
      help: "Time a request waited for its on-demand model to wake, by model and outcome (ready, timeout)",
      labelNames: ["model", "outcome"],
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers: [o.metrics],
    });
  }

  /** Notes a request for `model` (fire and forget: a lost note only makes the model sleep sooner). */
  touch(model: string): void {
    const now = Date.now();
    if (now - (this.touched.get(model) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(model, now);
    noteModelUse(this.o.redis, model, now).catch(() => undefined);
  }

  /** The change feed said something of `model`'s replicas: waiting requests look again. */
  changed(model: string): void {
    const ws = this.waiting.get(model);
    if (!ws) return;
    this.waiting.delete(model);
    for (const w of ws) w();
  }

  /** Asks an on-demand model with no ready replica to wake, and returns at once (a fallback answers meanwhile). */
  wakeWithoutWaiting(model: string): void {
    if (this.o.registry.catalogEntry(model)?.minReplicas === 0) this.wake(model);
  }

  /**
   * Ready replicas of an on-demand model, woken if need be; [] for a model that is not on demand (the
   * caller answers as for any model not served). A wake that outlasts the limit is a 503 with Retry-After.
   */
  async awaitReplicas(model: string): Promise<Endpoint[]> {
    const entry = this.o.registry.catalogEntry(model);
    if (!entry || entry.minReplicas !== 0) return [];
    this.touch(model);
    const limitMs = entry.wakeWaitMs ?? this.o.waitMs;
    const started = performance.now();
    let endpoints = this.o.registry.endpoints(model);
    while (endpoints.length === 0) {
      const left = limitMs - (performance.now() - started);
      if (left <= 0) break;
      this.wake(model);
      await this.nextChange(model, Math.min(left, RECHECK_MS));
      endpoints = this.o.registry.endpoints(model);
    }
    // Woken: the next time it sleeps, the first request asks at once.
    if (endpoints.length) this.signalled.delete(model);
    const seconds = (performance.now() - started) / 1000;
    this.waits.observe({ model, outcome: endpoints.length ? "ready" : "timeout" }, seconds);
    if (endpoints.length === 0) {
      throw new ApiError("unavailable", `model '${model}' is waking up (on demand) and was not ready within ${Math.round(limitMs / 1000)} s; try again shortly`, {
        code: "model_waking",
        retryAfterS: 5,
      });
    }
    return endpoints;
  }

  /** Signals the model's workflow (starting it if the model was never served), once per RESIGNAL_EVERY_MS. */
  private wake(model: string): void {
    const now = Date.now();
    if (now - (this.signalled.get(model) ?? 0) < RESIGNAL_EVERY_MS) return;
    this.signalled.set(model, now);
    this.wakes.inc({ model });
    askModelToWake(this.o.temporal, this.o.taskQueue, model, "a request is waiting")
      .catch((err: unknown) => {
        // The next waiting request asks again.
        this.signalled.delete(model);
        log.warn("could not ask a model to wake", { model, error: err as Error });
      });
  }

  private nextChange(model: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let ws = this.waiting.get(model);
      if (!ws) this.waiting.set(model, (ws = new Set()));
      const set = ws;
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }
}
