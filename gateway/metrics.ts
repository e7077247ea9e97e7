// The gateway's Prometheus metrics, served on their own port.
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export class GatewayMetrics {
  readonly registry = new Registry();
  private requests = new Counter({ name: "llmgw_requests_total", help: "Client API requests by model and status", labelNames: ["model", "status"], registers: [this.registry] });
  private latency = new Histogram({
    name: "llmgw_request_duration_seconds",
    help: "Client API request latency by model",
    labelNames: ["model"],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "llmgw_gateway_" });
  }

  observe(model: string, status: number, seconds: number): void {
    this.requests.inc({ model, status: String(status) });
    this.latency.observe({ model }, seconds);
  }
}
