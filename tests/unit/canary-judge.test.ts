import assert from "node:assert/strict";
import { it } from "node:test";
import { judge } from "../../workflows/canary.ts";

const limits = { maxErrorRate: 0.01, maxLatencyRatio: 1.5, minRequests: 10 };
const fig = (requests: number, errorRate: number, p50Ms: number | null) => ({ requests, errorRate, p50Ms });

it("judges a canary window on its own figures against the stable version's", () => {
  const cases: [ReturnType<typeof fig>, ReturnType<typeof fig>, string][] = [
    [fig(100, 0, 10), fig(5, 0, 10), "too-few"],
    [fig(100, 0, 10), fig(50, 0.02, 10), "errors"],
    [fig(100, 0, 10), fig(50, 0.01, 10), "ok"],
    [fig(100, 0, 20), fig(50, 0, 30.1), "latency"],
    [fig(100, 0, 20), fig(50, 0, 30), "ok"],
    [fig(100, 0, 1), fig(50, 0, 9), "ok"], // 9× slower, but by 8 ms: noise
    [fig(0, 0, null), fig(50, 0, 30), "ok"],
  ];
  for (const [stable, canary, want] of cases) assert.equal(judge(limits, stable, canary), want, JSON.stringify({ stable, canary }));
});
