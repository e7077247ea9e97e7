// Reads the load an engine reports in its Prometheus text, under each engine's own names (vLLM's,
// which the sim uses too; SGLang's; llama.cpp llama-server's, which node-llama-cpp serves too):
// requests running and waiting, and the share of KV cache in use. Series with several label sets
// (one per model or engine) are summed; kv cache takes the largest.
export interface EngineLoad {
  running: number;
  waiting: number;
  kvCacheUsage: number;
}

type Field = "running" | "waiting" | "kv" | "kvOld";
const NAMES: ReadonlyMap<string, Field> = new Map<string, Field>([
  ["vllm:num_requests_running", "running"],
  ["vllm:num_requests_waiting", "waiting"],
  ["vllm:kv_cache_usage_perc", "kv"],
  ["vllm:gpu_cache_usage_perc", "kvOld"], // vLLM before 0.10
  ["sglang:num_running_reqs", "running"],
  ["sglang:num_queue_reqs", "waiting"],
  ["sglang:token_usage", "kv"],
  ["llamacpp:requests_processing", "running"],
  ["llamacpp:requests_deferred", "waiting"],
  ["llamacpp:kv_cache_usage_ratio", "kv"],
]);

export function parseEngineLoad(text: string): EngineLoad | null {
  let running = NaN;
  let waiting = NaN;
  let kv = NaN;
  let kvOld = NaN;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const c = text.charCodeAt(start);
    if (c === 118 /* v */ || c === 115 /* s */ || c === 108 /* l */) {
      const nameEnd = nameEndOf(text, start, end);
      const field = NAMES.get(text.slice(start, nameEnd));
      if (field) {
        const v = valueOf(text, nameEnd, end);
        if (Number.isFinite(v)) {
          if (field === "running") running = (running || 0) + v;
          else if (field === "waiting") waiting = (waiting || 0) + v;
          else if (field === "kv") kv = Math.max(kv || 0, v);
          else kvOld = Math.max(kvOld || 0, v);
        }
      }
    }
    start = end + 1;
  }
  if (Number.isNaN(running) && Number.isNaN(waiting)) return null;
  const usage = Number.isNaN(kv) ? kvOld : kv;
  return { running: running || 0, waiting: waiting || 0, kvCacheUsage: Number.isNaN(usage) ? 0 : usage };
}

function nameEndOf(text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */ || c === 32 /* space */) return i;
  }
  return end;
}

/** The sample value: after the labels (if any), before an optional timestamp. */
function valueOf(text: string, nameEnd: number, end: number): number {
  let i = nameEnd;
  if (text.charCodeAt(i) === 123) {
    // Label values may hold "}" inside quotes.
    let quoted = false;
    for (i++; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 92 /* \ */ && quoted) i++;
      else if (c === 34 /* " */) quoted = !quoted;
      else if (c === 125 /* } */ && !quoted) break;
    }
    i++;
  }
  const parts = text.slice(i, end).trim().split(/\s+/);
  return Number(parts[0]);
}
