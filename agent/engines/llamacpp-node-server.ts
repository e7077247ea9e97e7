// The `node-llama-cpp` engine: llama.cpp itself (the node-llama-cpp package's prebuilt build, run
// on the CPU) behind an HTTP server that answers the way llama.cpp's `llama-server` does — the
// OpenAI API (chat and completions, streamed or not), /health (503 while loading), /v1/models and,
// with --metrics, Prometheus /metrics under llama-server's `llamacpp:` names. Inference, the
// tokenizer and the chat template are llama.cpp's; only the HTTP layer is ours.
//
//   node --import tsx agent/engines/llamacpp-node-server.ts --model /path/m.gguf --port 18001
//     [--host 127.0.0.1] [--alias NAME] [--ctx-size N] [--parallel N] [--threads N] [--metrics]
// A key in LLAMA_API_KEY is demanded of callers (llama-server's variable); /health and /v1/models stay open.
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import express, { type Request, type Response } from "express";
import { z } from "zod";
import { getLlama, LlamaChat, LlamaCompletion, LlamaLogLevel, resolveChatWrapper, type ChatHistoryItem, type ChatWrapper, type LlamaContextSequence, type LlamaModel } from "node-llama-cpp";
import { jsonFallbacks } from "../../common/json-fallback.ts";
import { log, setLogProcess } from "../../common/logging.ts";
import { LLAMACPP_NODE_FLAGS } from "./llamacpp-node-flags.ts";
import { tokenizerRoutes, type Tokenizer } from "./llamacpp-node-tokenize.ts";

export const settingsSchema = z.strictObject({
  model: z.string().min(1, "--model: a GGUF file is required"),
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65535),
  alias: z.string().min(1).optional(),
  /** 0: the model's trained context. */
  ctxSize: z.coerce.number().int().min(0).default(0),
  /** Requests served at once (llama-server's slots); the rest wait in order. */
  parallel: z.coerce.number().int().min(1).max(64).default(1),
  /** 0: node-llama-cpp's choice. */
  threads: z.coerce.number().int().min(0).default(0),
  metrics: z.boolean().default(false),
  apiKey: z.string().min(1).optional(),
});
export type Settings = z.output<typeof settingsSchema>;

// An engine child, started without llmgw's config: its key comes in its environment, as llama-server's does.
export function settingsFromArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): Settings {
  const { values } = parseArgs({ args: argv, options: LLAMACPP_NODE_FLAGS, strict: true });
  return settingsSchema.parse({
    model: values.model,
    host: values.host,
    port: values.port,
    alias: values.alias,
    ctxSize: values["ctx-size"],
    parallel: values.parallel,
    threads: values.threads,
    metrics: values.metrics,
    apiKey: env.LLAMA_API_KEY || undefined,
  });
}

const text = z.string();
const contentPart = z.object({ type: z.literal("text"), text });
const message = z.object({
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: z.union([text, z.array(contentPart), z.null()]).optional(),
});
const common = {
  model: z.string().optional(),
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
};
const chatBody = z.object({ ...common, messages: z.array(message).min(1), max_completion_tokens: z.number().int().positive().nullish() });
const completionBody = z.object({ ...common, prompt: z.union([text, z.array(text).length(1)]) });
type Common = z.infer<z.ZodObject<typeof common>>;

/** llama-server's error body. */
function error(res: Response, code: number, message: string): void {
  const type = code === 401 ? "authentication_error" : code === 404 ? "not_found_error" : code === 503 ? "unavailable_error" : code >= 500 ? "server_error" : "invalid_request_error";
  res.status(code).json({ error: { code, message, type } });
}

/** What llama-server counts for /metrics. */
class Counters {
  promptTokens = 0;
  promptSeconds = 0;
  predictedTokens = 0;
  predictedSeconds = 0;
  decodes = 0;
  maxTokens = 0;
  processing = 0;
  deferred = 0;
  kvTokens = 0;

  text(ctxSize: number): string {
    const rows: [string, "counter" | "gauge", string, number][] = [
      ["prompt_tokens_total", "counter", "Number of prompt tokens processed.", this.promptTokens],
      ["prompt_seconds_total", "counter", "Prompt process time", this.promptSeconds],
      ["tokens_predicted_total", "counter", "Number of generation tokens processed.", this.predictedTokens],
      ["tokens_predicted_seconds_total", "counter", "Predict process time", this.predictedSeconds],
      ["n_decode_total", "counter", "Total number of llama_decode() calls", this.decodes],
      ["n_tokens_max", "counter", "Largest observed n_tokens.", this.maxTokens],
      ["prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.", this.promptSeconds ? this.promptTokens / this.promptSeconds : 0],
      ["predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.", this.predictedSeconds ? this.predictedTokens / this.predictedSeconds : 0],
      ["kv_cache_usage_ratio", "gauge", "KV-cache usage. 1 means 100 percent usage.", ctxSize ? this.kvTokens / ctxSize : 0],
      ["kv_cache_tokens", "gauge", "KV-cache tokens.", this.kvTokens],
      ["requests_processing", "gauge", "Number of requests processing.", this.processing],
      ["requests_deferred", "gauge", "Number of requests deferred.", this.deferred],
    ];
    return rows.map(([n, t, h, v]) => `# HELP llamacpp:${n} ${h}\n# TYPE llamacpp:${n} ${t}\nllamacpp:${n} ${v}\n`).join("");
  }
}

/** The context's sequences as llama-server's slots: one request each, the rest wait in order. */
class Slots {
  private free: LlamaContextSequence[];
  private waiters: ((s: LlamaContextSequence) => void)[] = [];
  constructor(
    sequences: LlamaContextSequence[],
    private readonly counters: Counters,
  ) {
    this.free = sequences;
  }
  async take(): Promise<LlamaContextSequence> {
    const s = this.free.pop() ?? (await this.wait());
    this.counters.processing++;
    // A fresh slot for every request: the answer then never depends on what the slot held before.
    await s.clearHistory();
    return s;
  }
  private async wait(): Promise<LlamaContextSequence> {
    this.counters.deferred++;
    try {
      return await new Promise<LlamaContextSequence>((resolve) => this.waiters.push(resolve));
    } finally {
      this.counters.deferred--;
    }
  }
  give(s: LlamaContextSequence): void {
    this.counters.processing--;
    const next = this.waiters.shift();
    if (next) next(s);
    else this.free.push(s);
  }
}

interface Generated {
  text: string;
  promptTokens: number;
  completionTokens: number;
  finish: "stop" | "length";
}

interface Job {
  kind: "chat" | "completion";
  body: Common;
  run(seq: LlamaContextSequence, opts: GenOptions): Promise<{ text: string; stopReason: string }>;
  promptTokens(seq: LlamaContextSequence): number;
}

interface GenOptions {
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  seed?: number;
  customStopTriggers?: string[];
  signal: AbortSignal;
  stopOnAbortSignal: true;
  onTextChunk: (t: string) => void;
  onToken: (t: unknown[]) => void;
}

function history(messages: z.infer<typeof message>[]): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = messages.map((m) => {
    const t = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text).join("");
    if (m.role === "system" || m.role === "developer") return { type: "system", text: t };
    if (m.role === "user") return { type: "user", text: t };
    return { type: "model", response: [t] };
  });
  items.push({ type: "model", response: [] });
  return items;
}

export interface EngineHandle {
  port: number;
  close(): Promise<void>;
}

export async function startEngine(s: Settings): Promise<EngineHandle> {
  const counters = new Counters();
  const alias = s.alias ?? path.basename(s.model);
  const created = Math.floor(Date.now() / 1000);
  let model: LlamaModel | null = null;
  let slots: Slots | null = null;
  let ctxSize = 0;
  /** The chat template LlamaChat resolves by default: the chat route and /tokenize count with it. */
  let wrapper: ChatWrapper | null = null;
  let tokenizer: Tokenizer | null = null;

  const app = express();
  app.disable("x-powered-by");
  app.use(express.json({ limit: "16mb" }));
  app.get(["/health", "/v1/health"], (_req, res) => (slots ? res.json({ status: "ok" }) : error(res, 503, "Loading model")));
  app.get(["/models", "/v1/models"], (_req, res) => {
    res.json({ object: "list", data: [{ id: alias, object: "model", created, owned_by: "llamacpp", meta: model ? { n_ctx_train: model.trainContextSize, size: model.size } : null }] });
  });
  app.use((req, res, next) => {
    if (s.apiKey && req.headers.authorization !== `Bearer ${s.apiKey}`) return error(res, 401, "Invalid API Key");
    next();
  });
  app.get("/metrics", (_req, res) => {
    if (!s.metrics) return error(res, 501, "This server does not support metrics endpoint. Start it with `--metrics`");
    res.type("text/plain; version=0.0.4").send(counters.text(ctxSize));
  });
  tokenizerRoutes(app, () => (slots ? tokenizer : null), error);

  app.post(["/v1/chat/completions", "/chat/completions"], (req, res) => {
    const b = chatBody.safeParse(req.body);
    if (!b.success) return error(res, 400, z.prettifyError(b.error));
    if (!model || !slots) return error(res, 503, "Loading model");
    const m = model;
    const items = history(b.data.messages);
    void serve(req, res, {
      kind: "chat",
      body: { ...b.data, max_tokens: b.data.max_completion_tokens ?? b.data.max_tokens },
      async run(seq, opts) {
        const chat = new LlamaChat({ contextSequence: seq, autoDisposeSequence: false, chatWrapper: wrapper! });
        try {
          const r = await chat.generateResponse(items, opts);
          return { text: r.response, stopReason: r.metadata.stopReason };
        } finally {
          chat.dispose({ disposeSequence: false });
        }
      },
      promptTokens: () => wrapper!.generateContextState({ chatHistory: items }).contextText.tokenize(m.tokenizer).length,
    });
  });

  app.post(["/v1/completions", "/completions"], (req, res) => {
    const b = completionBody.safeParse(req.body);
    if (!b.success) return error(res, 400, z.prettifyError(b.error));
    if (!model || !slots) return error(res, 503, "Loading model");
    const m = model;
    const prompt = typeof b.data.prompt === "string" ? b.data.prompt : b.data.prompt[0]!;
    void serve(req, res, {
      kind: "completion",
      body: b.data,
      async run(seq, opts) {
        const completion = new LlamaCompletion({ contextSequence: seq });
        try {
          const r = await completion.generateCompletionWithMeta(prompt, opts);
          return { text: r.response, stopReason: r.metadata.stopReason };
        } finally {
          completion.dispose({ disposeSequence: false });
        }
      },
      promptTokens: () => m.tokenize(prompt).length + (m.tokens.bos !== null && m.tokens.shouldPrependBosToken ? 1 : 0),
    });
  });

  app.use((_req, res) => error(res, 404, "File Not Found"));
  // A body that is not JSON (express.json's error) in llama-server's shape, not Express's HTML.
  app.use((err: { status?: number; message: string }, _req: Request, res: Response, _next: express.NextFunction) => error(res, err.status ?? 500, err.message));

  /** Runs one request in a slot; streams SSE chunks as llama.cpp detokenizes them. */
  async function serve(req: Request, res: Response, job: Job): Promise<void> {
    const id = `${job.kind === "chat" ? "chatcmpl" : "cmpl"}-${Math.random().toString(36).slice(2, 14)}`;
    const object = job.kind === "chat" ? "chat.completion" : "text_completion";
    const b = job.body;
    const stream = b.stream === true;
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: stream && job.kind === "chat" ? "chat.completion.chunk" : object, created: Math.floor(Date.now() / 1000), model: alias, choices: [choice], ...extra })}\n\n`;
    if (stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      if (job.kind === "chat") res.write(chunk({ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }));
    }
    const seq = await slots!.take();
    let out: Generated;
    try {
      const t0 = performance.now();
      let first = 0;
      let completionTokens = 0;
      const stop = b.stop == null ? undefined : Array.isArray(b.stop) ? b.stop : [b.stop];
      const r = await job.run(seq, {
        maxTokens: b.max_tokens ?? Math.max(1, seq.contextSize - 1),
        temperature: b.temperature ?? 0.8,
        topP: b.top_p ?? undefined,
        topK: b.top_k ?? undefined,
        seed: b.seed ?? undefined,
        customStopTriggers: stop,
        signal: abort.signal,
        stopOnAbortSignal: true,
        onToken: (t) => {
          if (completionTokens === 0) first = performance.now();
          completionTokens += t.length;
          counters.decodes += t.length;
        },
        onTextChunk: (t) => {
          if (stream && t) res.write(job.kind === "chat" ? chunk({ index: 0, delta: { content: t }, finish_reason: null }) : chunk({ index: 0, text: t, finish_reason: null, logprobs: null }));
        },
      });
      const promptTokens = job.promptTokens(seq);
      const end = performance.now();
      counters.promptTokens += promptTokens;
      counters.promptSeconds += ((first || end) - t0) / 1000;
      counters.predictedTokens += completionTokens;
      counters.predictedSeconds += first ? (end - first) / 1000 : 0;
      counters.maxTokens = Math.max(counters.maxTokens, promptTokens + completionTokens);
      out = { text: r.text, promptTokens, completionTokens, finish: r.stopReason === "maxTokens" ? "length" : "stop" };
    } catch (err) {
      log.error("generation failed", { err: (err as Error).message });
      if (stream) res.end();
      else error(res, 500, (err as Error).message);
      return;
    } finally {
      counters.kvTokens = seq.nextTokenIndex;
      slots!.give(seq);
    }
    if (abort.signal.aborted) return;
    const usage = { prompt_tokens: out.promptTokens, completion_tokens: out.completionTokens, total_tokens: out.promptTokens + out.completionTokens };
    if (!stream) {
      const choice = job.kind === "chat" ? { index: 0, message: { role: "assistant", content: out.text }, finish_reason: out.finish } : { index: 0, text: out.text, finish_reason: out.finish, logprobs: null };
      res.json({ id, object, created: Math.floor(Date.now() / 1000), model: alias, choices: [choice], usage });
      return;
    }
    res.write(job.kind === "chat" ? chunk({ index: 0, delta: {}, finish_reason: out.finish }) : chunk({ index: 0, text: "", finish_reason: out.finish, logprobs: null }));
    if (b.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ id, object: job.kind === "chat" ? "chat.completion.chunk" : object, created: Math.floor(Date.now() / 1000), model: alias, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  }

  jsonFallbacks(app);
  // Listen first, so /health can say "loading" while llama.cpp reads the weights.
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(s.port, s.host, () => resolve());
  });
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.warn });
  model = await llama.loadModel({ modelPath: s.model, gpuLayers: 0 });
  const context = await model.createContext({ contextSize: s.ctxSize || undefined, sequences: s.parallel, threads: s.threads || undefined });
  ctxSize = context.contextSize;
  const m = model;
  const w = (wrapper = resolveChatWrapper(m));
  const chatTokens = (messages: z.infer<typeof message>[]) => w.generateContextState({ chatHistory: history(messages) }).contextText.tokenize(m.tokenizer) as number[];
  tokenizer = {
    chat: chatTokens,
    template(messages) {
      const tokens = chatTokens(messages);
      // llama-server leaves the BOS out of the template's text: its tokenizer adds it (add_special).
      return m.detokenize((m.tokens.shouldPrependBosToken && tokens[0] === m.tokens.bos ? tokens.slice(1) : tokens) as never, true);
    },
    text(content, addSpecial, parseSpecial) {
      const tokens = m.tokenize(content, parseSpecial) as number[];
      return addSpecial && m.tokens.bos !== null && m.tokens.shouldPrependBosToken ? [m.tokens.bos as number, ...tokens] : tokens;
    },
    piece: (t) => m.detokenize([t as never], true),
    contextSize: () => ctxSize,
  };
  slots = new Slots(
    Array.from({ length: s.parallel }, () => context.getSequence()),
    counters,
  );
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await llama.dispose();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  setLogProcess("node-llama-cpp");
  let settings: Settings;
  try {
    settings = settingsFromArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`node-llama-cpp: ${e instanceof z.ZodError ? z.prettifyError(e) : (e as Error).message}\n`);
    process.exit(2);
  }
  startEngine(settings).then(
    (h) => {
      log.info("node-llama-cpp engine ready", { port: h.port, model: settings.alias ?? settings.model, parallel: settings.parallel });
      const stop = () => void h.close().finally(() => process.exit(0));
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    },
    (e: unknown) => {
      log.error("node-llama-cpp engine failed to start", { err: e instanceof Error ? e.message : String(e) });
      process.exit(1);
    },
  );
}
