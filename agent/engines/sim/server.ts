// The `sim` engine: a simulated inference engine the agent starts per replica. It speaks the
// OpenAI HTTP API (chat, completions, embeddings, models, audio) and vLLM's Prometheus metrics, so the
// gateway and router cannot tell it from a real engine. Answers are deterministic for a prompt
// and seed (generation.ts); timing (time to first token, tokens per second, slots and a FIFO
// queue, a loading delay) is simulated (scheduling.ts). It is built for speed: raw node:http,
// precomputed strings, and no timers at all when both the time to first token and the token rate
// are 0. Run as a process by main.ts; LoRA adapters at run time: lora.ts.
import http from "node:http";
import { performance } from "node:perf_hooks";
import type { AddressInfo } from "node:net";
import { AnswerBodies } from "./bodies.ts";
import { embeddings } from "./embeddings.ts";
import { SimLoras } from "./lora.ts";
import { SimMetrics } from "./metrics.ts";
import { JSON_TYPE, LOADING_BODY, NOT_FOUND_BODY, Replies, STOPPING_BODY, UNAUTHORIZED_BODY, drain, readJson } from "./replies.ts";
import { BadRequest, parseGenRequest, type RequestDefaults } from "./request.ts";
import { rerank } from "./rerank.ts";
import { tokenize } from "./tokenize.ts";
import { speak } from "./speech.ts";
import { transcribe } from "./transcribe.ts";
import { servesRoute, type SimTask } from "./tasks.ts";
import { Scheduler } from "./scheduling.ts";
import { checkSettings, type SimSettings, type SimSettingsInput } from "./settings.ts";

export interface SimHandle {
  port: number;
  close(): Promise<void>;
}

type Route = "chat" | "completion" | "embeddings";

/** vLLM's routes beside the OpenAI API that the sim serves: a JSON body in, JSON out. */
const JSON_EXTRAS: ReadonlyMap<string, "tokenize" | "rerank"> = new Map([
  ["/tokenize", "tokenize"],
  ["/rerank", "rerank"],
  ["/v1/rerank", "rerank"],
  ["/v2/rerank", "rerank"],
]);

/** One sim engine's state and its request handling; startSim puts it on a port. */
class SimServer {
  readonly server: http.Server;
  private ready: boolean;
  private readyTimer: NodeJS.Timeout | null = null;
  private readonly replies = new Replies();
  private readonly metrics: SimMetrics;
  private readonly bodies: AnswerBodies;
  private readonly scheduler: Scheduler;
  private readonly loras: SimLoras;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly defaults: RequestDefaults;
  private readonly embeddingMode: "hash" | "words";
  private readonly task: SimTask;
  private readonly baseModel: Record<string, unknown>;
  private readonly modelsBody: string;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly s: SimSettings,
    private readonly expectedAuth: string | null,
  ) {
    this.ready = s.loadDelayMs === 0;
    if (!this.ready) {
      this.readyTimer = setTimeout(() => {
        this.ready = true;
        this.readyTimer = null;
      }, s.loadDelayMs);
      this.readyTimer.unref();
    }
    this.metrics = new SimMetrics(s.model);
    this.bodies = new AnswerBodies(this.created);
    this.scheduler = new Scheduler(s, this.replies, this.bodies, this.metrics);
    this.loras = new SimLoras(s.loraLoadMs);
    this.embeddingMode = s.embeddings;
    this.task = s.task;
    this.defaults = {
      servedJson: JSON.stringify(s.model),
      contextLength: s.contextLength,
      maxTokensDefault: s.maxTokensDefault,
      reasoning: s.reasoning,
      guardJudge: s.guardJudge,
      prefixCache: this.scheduler.prefixCache !== null,
    };
    this.baseModel = { id: s.model, object: "model", created: this.created, owned_by: "vllm", root: s.model, parent: null, max_model_len: s.contextLength, permission: [] };
    this.modelsBody = JSON.stringify({ object: "list", data: [this.baseModel] });
    this.server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => this.handle(req, res));
  }

  private get stopping(): boolean {
    return this.replies.stopping;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const arrival = performance.now();
    const h = req.headers["x-request-id"];
    const reqId = typeof h === "string" ? h : undefined;
    let url = req.url ?? "/";
    const q = url.indexOf("?");
    if (q >= 0) url = url.slice(0, q);
    if (!servesRoute(this.task, url)) {
      drain(req);
      this.replies.sendError(res, 404, `The model does not support the ${url} API`, null, reqId);
      return;
    }
    const extra = JSON_EXTRAS.get(url);
    if (url === "/v1/audio/transcriptions" || url === "/inference" || url === "/v1/audio/speech") this.handleAudio(req, res, url, reqId);
    else if (extra !== undefined) this.handleExtra(req, res, extra, reqId);
    else if (url.startsWith("/v1/")) this.handleApi(req, res, url, reqId, arrival);
    else this.handleOther(req, res, url, reqId);
  }

  private handleApi(req: http.IncomingMessage, res: http.ServerResponse, url: string, reqId: string | undefined, arrival: number): void {
    const method = req.method;
    const r = this.replies;
    if (this.expectedAuth !== null && req.headers.authorization !== this.expectedAuth) {
      drain(req);
      r.send(res, 401, UNAUTHORIZED_BODY, reqId);
      return;
    }
    if (!this.ready || this.stopping) {
      drain(req);
      r.send(res, 503, this.stopping ? STOPPING_BODY : LOADING_BODY, reqId);
      return;
    }
    let route: Route | null = null;
    if (url === "/v1/chat/completions") route = "chat";
    else if (url === "/v1/completions") route = "completion";
    else if (url === "/v1/embeddings") route = "embeddings";
    else if (url === "/v1/models") {
      drain(req);
      if (method === "GET") r.send(res, 200, this.loras.loads.length === 0 ? this.modelsBody : JSON.stringify({ object: "list", data: [this.baseModel, ...this.loras.models(this.s.model)] }), reqId);
      else r.sendError(res, 405, "Method Not Allowed", null, reqId);
      return;
    } else if (url === "/v1/load_lora_adapter" || url === "/v1/unload_lora_adapter") {
      if (method !== "POST") {
        drain(req);
        r.sendError(res, 405, "Method Not Allowed", null, reqId);
        return;
      }
      void readJson(req).then(async (body) => {
        const a = url === "/v1/load_lora_adapter" ? await this.loras.load(body) : this.loras.unload(body);
        r.send(res, a.status, a.body, reqId, a.type === "text" ? "text/plain; charset=utf-8" : JSON_TYPE);
      });
      return;
    }
    if (route === null) {
      drain(req);
      r.send(res, 404, NOT_FOUND_BODY, reqId);
      return;
    }
    if (method !== "POST") {
      drain(req);
      r.sendError(res, 405, "Method Not Allowed", null, reqId);
      return;
    }
    const to = route;
    let first: Buffer | null = null;
    let more: Buffer[] | null = null;
    req.on("data", (c: Buffer) => {
      if (first === null) first = c;
      else (more ??= [first]).push(c);
    });
    req.on("end", () => {
      const raw = more !== null ? Buffer.concat(more).toString("utf8") : first !== null ? (first as Buffer).toString("utf8") : "";
      this.handleBody(res, to, raw, reqId, arrival);
    });
  }

  private handleBody(res: http.ServerResponse, route: Route, raw: string, reqId: string | undefined, arrival: number): void {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      this.replies.sendError(res, 400, "We could not parse the JSON body of your request.", null, reqId);
      return;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      this.replies.sendError(res, 400, "The request body must be a JSON object.", null, reqId);
      return;
    }
    try {
      const named = (body as { model?: unknown }).model;
      if (typeof named === "string" && this.loras.has(named)) this.loras.served(named);
      if (route === "embeddings") {
        const e = embeddings(body as Record<string, unknown>, { servedJson: this.defaults.servedJson, created: this.created, mode: this.embeddingMode, nextId: () => this.scheduler.nextId("embd-") });
        this.metrics.recordEmbeddings(e.tokens, e.items);
        this.replies.send(res, 200, e.body, reqId);
      } else this.scheduler.admit(parseGenRequest(body as Record<string, unknown>, route, this.defaults, reqId, arrival), res);
    } catch (e) {
      if (e instanceof BadRequest) this.replies.sendError(res, 400, e.message, e.param, reqId);
      else throw e;
    }
  }

  /** Speech to text, OpenAI's route or whisper.cpp's server's /inference (transcribe.ts), and text to speech (speech.ts), behind the key. */
  private handleAudio(req: http.IncomingMessage, res: http.ServerResponse, url: string, reqId: string | undefined): void {
    const r = this.replies;
    if (this.expectedAuth !== null && req.headers.authorization !== this.expectedAuth) {
      drain(req);
      return r.send(res, 401, UNAUTHORIZED_BODY, reqId);
    }
    if (!this.ready || this.stopping || req.method !== "POST") {
      drain(req);
      return req.method !== "POST" ? r.sendError(res, 405, "Method Not Allowed", null, reqId) : r.send(res, 503, this.stopping ? STOPPING_BODY : LOADING_BODY, reqId);
    }
    if (url === "/v1/audio/speech") void speak(req, res, r, reqId);
    else void transcribe(req, url === "/inference").then((t) => r.send(res, t.status, t.body, reqId, t.type));
  }

  /** /tokenize and /rerank: behind the key as the API is, answered at once (no slot, no queue). */
  private handleExtra(req: http.IncomingMessage, res: http.ServerResponse, kind: "tokenize" | "rerank", reqId: string | undefined): void {
    const r = this.replies;
    if (this.expectedAuth !== null && req.headers.authorization !== this.expectedAuth) {
      drain(req);
      return r.send(res, 401, UNAUTHORIZED_BODY, reqId);
    }
    if (!this.ready || this.stopping) {
      drain(req);
      return r.send(res, 503, this.stopping ? STOPPING_BODY : LOADING_BODY, reqId);
    }
    if (req.method !== "POST") {
      drain(req);
      return r.sendError(res, 405, "Method Not Allowed", null, reqId);
    }
    void readJson(req).then((body) => {
      if (body === null || typeof body !== "object" || Array.isArray(body)) return r.sendError(res, 400, "The request body must be a JSON object.", null, reqId);
      try {
        const b = body as Record<string, unknown>;
        r.send(res, 200, kind === "tokenize" ? tokenize(b, this.s.contextLength) : rerank(b, this.s.model, this.scheduler.nextId("rerank-")), reqId);
      } catch (e) {
        if (e instanceof BadRequest) r.sendError(res, 400, e.message, e.param, reqId);
        else throw e;
      }
    });
  }

  /** Health, metrics, the LoRA record and the version: everything outside /v1/. */
  private handleOther(req: http.IncomingMessage, res: http.ServerResponse, url: string, reqId: string | undefined): void {
    const method = req.method;
    const r = this.replies;
    drain(req);
    if (url === "/health" || url === "/ping") {
      if (this.ready && !this.stopping) r.send(res, 200, "", reqId);
      else r.send(res, 503, this.stopping ? STOPPING_BODY : LOADING_BODY, reqId);
    } else if (url === "/metrics" && method === "GET") {
      const load = { running: this.scheduler.running, waiting: this.scheduler.waiting, slots: this.s.slots };
      r.send(res, 200, this.metrics.text(load, this.scheduler.prefixCache), reqId, "text/plain; version=0.0.4; charset=utf-8");
    } else if (url === "/debug/lora" && method === "GET") {
      r.send(res, 200, JSON.stringify({ loads: this.loras.loads, requests: Object.fromEntries(this.loras.requests) }), reqId);
    } else if (url === "/version" && method === "GET") {
      r.send(res, 200, '{"version":"sim"}', reqId);
    } else r.send(res, 404, NOT_FOUND_BODY, reqId);
  }

  /** Refuses new requests, lets those in flight finish (5 s at most), then closes every connection. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolveClose) => {
      this.replies.stopping = true;
      if (this.readyTimer !== null) clearTimeout(this.readyTimer);
      this.server.close(() => resolveClose());
      this.server.closeIdleConnections();
      const force = setTimeout(() => {
        // In-flight requests had 5 s; cut what is left.
        this.scheduler.destroyWaiting();
        this.server.closeAllConnections();
      }, 5000);
      force.unref();
      this.scheduler.whenIdle(() => {
        clearTimeout(force);
        // Let the last responses flush before cutting keep-alive connections.
        setImmediate(() => this.server.closeAllConnections());
      });
    });
    return this.closing;
  }
}

export async function startSim(input: SimSettingsInput): Promise<SimHandle> {
  const s = checkSettings(input);
  // The key's variable is named by the agent, which starts the sim as an engine child without
  // llmgw's config: it is read from this process's environment.
  const apiKey = s.apiKey ?? (s.apiKeyEnv ? process.env[s.apiKeyEnv] || undefined : undefined);
  // A key asked for but not given must not start an engine open to anyone.
  if (s.apiKeyEnv && !apiKey) throw new Error(`--api-key-env names ${s.apiKeyEnv}, which is not set: refusing to serve without a key`);
  const sim = new SimServer(s, apiKey ? `Bearer ${apiKey}` : null);
  const server = sim.server;
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(s.port, s.host, () => {
      server.off("error", reject);
      resolveListen();
    });
  });
  return { port: (server.address() as AddressInfo).port, close: () => sim.close() };
}
