// Which routes a sim serves when it plays a model of one task, as vLLM does: a Whisper model
// answers transcriptions only, an embedding or scoring model (`--runner pooling`) embeddings and
// rerank only, and every other model route is a 404 "does not support". `all` (the default) serves
// everything. The model list, tokenizer, health and metrics are every model's.
export const SIM_TASKS = ["all", "generate", "embed", "transcription"] as const;
export type SimTask = (typeof SIM_TASKS)[number];

const ROUTES: Record<Exclude<SimTask, "all">, readonly string[]> = {
  generate: ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/audio/speech"],
  embed: ["/v1/embeddings", "/rerank", "/v1/rerank", "/v2/rerank"],
  transcription: ["/v1/audio/transcriptions", "/inference"],
};
const TASK_ROUTES = new Set(Object.values(ROUTES).flat());

/** Whether a sim of `task` serves `url` (its path, no query). */
export function servesRoute(task: SimTask, url: string): boolean {
  return task === "all" || !TASK_ROUTES.has(url) || ROUTES[task].includes(url);
}
