// Scrapes every replica's /metrics each second over its own keep-alive pool, so routing sees the
// engine's queue and KV cache, including load sent by other gateways.
import { parseEngineLoad } from "./engine-metrics.ts";
import type { Endpoint } from "./endpoint.ts";

export const SCRAPE_EVERY_MS = 1_000;

export class MetricsScraper {
  private timer: NodeJS.Timeout | undefined;
  private busy = new WeakSet<Endpoint>();

  constructor(
    private readonly endpoints: () => Iterable<Endpoint>,
    private readonly everyMs = SCRAPE_EVERY_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.scrapeAll(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  scrapeAll(): Promise<void> {
    const all: Promise<void>[] = [];
    for (const e of this.endpoints()) if (!this.busy.has(e)) all.push(this.scrape(e));
    return Promise.all(all).then(() => undefined);
  }

  private async scrape(e: Endpoint): Promise<void> {
    this.busy.add(e);
    try {
      const r = await e.pool.request({ path: "/metrics", method: "GET", headers: { authorization: e.engineAuth }, headersTimeout: this.everyMs, bodyTimeout: this.everyMs });
      const text = await r.body.text();
      const load = r.statusCode === 200 ? parseEngineLoad(text) : null;
      if (!load) return void e.busy.engineUnknown(); // stale data ages out in pick (STALE_MS)
      e.busy.engineRunning(load.running);
      e.running = load.running;
      e.waiting = load.waiting;
      e.kvCacheUsage = load.kvCacheUsage;
      e.scrapedAt = Date.now();
    } catch {
      // An engine that does not answer its metrics is judged by its requests (the breaker).
      e.busy.engineUnknown();
    } finally {
      this.busy.delete(e);
    }
  }
}
