// A bare /metrics endpoint for the processes that serve nothing else over HTTP (worker, agent).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, type Registry } from "prom-client";
import { config } from "./config.ts";

/** prom-client's gauges named like counters, which `promtool check metrics` rejects. */
const MISNAMED_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/**
 * prom-client's process and Node.js metrics under `prefix`, less the ones misnamed upstream. The
 * event-loop delay is sampled every LLMGW_LOOP_MONITOR_MS, not prom-client's 10: each sample wakes
 * the process, and at 10 ms an idle process spent 6.6 ms of CPU a second on it (0.9 at 100 ms;
 * docs/benchmarks-history.md, stop 23).
 */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix, eventLoopMonitoringPrecision: config().LLMGW_LOOP_MONITOR_MS });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(prefix + name);
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export function serveMetrics(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`metrics failed: ${err.message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    );
  });
}
