// llmgw_mcp_calls_total{server,tool,outcome} and the calls' latency, on the gateway's registry.
import { Counter, Histogram, type Registry } from "prom-client";

export type Outcome = "ok" | "tool_error" | "upstream_error" | "timeout" | "rate_limited" | "breaker_open" | "denied" | "too_large" | "cancelled" | "blocked" | "invalid";

export class McpMetrics {
  private calls: Counter<"server" | "tool" | "outcome">;
  private latency: Histogram<"server">;

  constructor(registry: Registry) {
    this.calls = new Counter({ name: "llmgw_mcp_calls_total", help: "MCP tool calls through /mcp by server, tool and outcome", labelNames: ["server", "tool", "outcome"], registers: [registry] });
    this.latency = new Histogram({ name: "llmgw_mcp_call_duration_seconds", help: "MCP tool calls' latency by server", labelNames: ["server"], buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120], registers: [registry] });
  }

  observe(server: string, tool: string, outcome: Outcome, seconds: number): void {
    this.calls.inc({ server, tool, outcome });
    if (outcome !== "denied" && outcome !== "rate_limited" && outcome !== "breaker_open") this.latency.observe({ server }, seconds);
  }
}
