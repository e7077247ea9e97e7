// The sim's Prometheus metrics under vLLM's names (the gateway and the router read them as they read
// a real engine's): gauges of running and waiting requests and KV-cache use, token and request
// counters, and latency histograms. Kept as plain numbers and written by hand, for speed.
import type { Choice } from "./generation.ts";
import type { PrefixCache } from "./prefix-cache.ts";
import type { GenRequest } from "./request.ts";

const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];
const TPOT_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];
const E2E_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];

class Histogram {
  readonly counts: Float64Array; // per bucket, not cumulative; the last is +Inf
  sum = 0;
  count = 0;
  constructor(readonly bounds: number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  /** Records `weight` observations of `v` seconds. */
  observe(v: number, weight = 1): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + weight;
    this.sum += v * weight;
    this.count += weight;
  }
  render(out: string[], name: string, help: string, label: string): void {
    out.push(`# HELP ${name} ${help}\n# TYPE ${name} histogram\n`);
    let cum = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cum += this.counts[i] as number;
      out.push(`${name}_bucket{${label},le="${fmt(this.bounds[i] as number)}"} ${fmt(cum)}\n`);
    }
    cum += this.counts[this.bounds.length] as number;
    out.push(`${name}_bucket{${label},le="+Inf"} ${fmt(cum)}\n`);
    out.push(`${name}_count{${label}} ${fmt(this.count)}\n${name}_sum{${label}} ${fmt(this.sum)}\n`);
  }
}

/** Prometheus' Python client writes floats: 1.0, 0.25, 1e-05. */
function fmt(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

function promLabelValue(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/** What metrics need of a finished job (scheduling.ts's Job). */
export interface JobFigures {
  req: GenRequest;
  choices: readonly Choice[];
  maxPieces: number;
  emitted: number;
  firstAt: number;
}

export class SimMetrics {
  private promptTokens = 0;
  private generationTokens = 0;
  private readonly success = { stop: 0, length: 0, abort: 0 };
  private readonly ttft = new Histogram(TTFT_BUCKETS);
  private readonly tpot = new Histogram(TPOT_BUCKETS);
  private readonly e2e = new Histogram(E2E_BUCKETS);
  private readonly label: string;

  constructor(model: string) {
    this.label = `model_name="${promLabelValue(model)}"`;
  }

  /** A job that ended: its tokens, how it finished, and its latencies. */
  recordJob(job: JobFigures, end: number, aborted: boolean): void {
    const g = job.req;
    let pt = 0;
    for (const t of g.promptTokens) pt += t;
    let generated = 0;
    if (aborted) {
      for (const c of job.choices) generated += Math.min(job.emitted, c.pieces.length + c.reasoning.length);
    } else for (const c of job.choices) generated += c.pieces.length + c.reasoning.length;
    this.promptTokens += pt;
    this.generationTokens += generated;
    if (aborted) {
      this.success.abort++;
    } else {
      for (const c of job.choices) this.success[c.finish === "tool_calls" ? "stop" : c.finish]++;
    }
    if (job.firstAt > 0) {
      this.ttft.observe((job.firstAt - g.arrival) / 1000);
      const perChoice = job.maxPieces;
      if (perChoice > 1) this.tpot.observe((end - job.firstAt) / 1000 / (perChoice - 1), perChoice - 1);
    }
    if (!aborted) this.e2e.observe((end - g.arrival) / 1000);
  }

  /** A client gone while its request still waited: its prompt counts as read, the request as aborted. */
  recordQueuedAbort(promptTokens: readonly number[]): void {
    this.success.abort++;
    let pt = 0;
    for (const t of promptTokens) pt += t;
    this.promptTokens += pt;
  }

  /** An embeddings request: prompt tokens only, one finished request when it had any input. */
  recordEmbeddings(tokens: number, items: number): void {
    this.promptTokens += tokens;
    this.success.stop += items > 0 ? 1 : 0;
  }

  /** The exposition text, with the scheduler's load and the prefix cache's counters (when modelled). */
  text(load: { running: number; waiting: number; slots: number }, prefixCache: PrefixCache | null): string {
    const { running, waiting } = load;
    const label = this.label;
    const out: string[] = [];
    const gauge = (name: string, help: string, v: number) =>
      out.push(`# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}{${label}} ${fmt(v)}\n`);
    const counter = (name: string, help: string, v: number) =>
      out.push(`# HELP ${name} ${help}\n# TYPE ${name} counter\n${name}{${label}} ${fmt(v)}\n`);
    const usage = Math.min(1, running / load.slots);
    gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running);
    gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting);
    gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage);
    gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", usage);
    counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", this.promptTokens);
    counter("vllm:generation_tokens_total", "Number of generation tokens processed.", this.generationTokens);
    if (prefixCache !== null) {
      counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", prefixCache.queriedTokens);
      counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", prefixCache.hitTokens);
    }
    out.push(
      "# HELP vllm:request_success_total Count of successfully processed requests.\n" +
        "# TYPE vllm:request_success_total counter\n",
    );
    for (const r of ["stop", "length", "abort"] as const)
      out.push(`vllm:request_success_total{finished_reason="${r}",${label}} ${fmt(this.success[r])}\n`);
    this.ttft.render(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", label);
    this.tpot.render(out, "vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", label);
    this.e2e.render(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", label);
    return out.join("");
  }
}
