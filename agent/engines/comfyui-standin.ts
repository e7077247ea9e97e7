// A stand-in for ComfyUI, for machines where ComfyUI cannot run (no GPU, no Python stack). It
// speaks ComfyUI's own HTTP API and progress socket as ComfyUI does: POST /prompt (validated
// graph, FIFO queue, one prompt at a time), GET/POST /queue (list, delete, clear), POST
// /interrupt, GET /history[/{id}], GET /view, POST /upload/image, GET /system_stats and the /ws
// socket (status, execution_start, executing, progress, executed, execution_success,
// execution_interrupted). Outputs are real files: SaveImage writes PNGs carrying the prompt in
// tEXt chunks like ComfyUI, SaveGLB writes a glTF binary. Sampling takes --step-ms per step.
// GET /standin/log tells tests what the engine saw (deletes, interrupts, runs per prompt);
// POST /standin/hold makes each prompt wait before its first step until POST /standin/release, so a
// test can prove two engines ran at once instead of hoping their timings overlap.
//
//   node --import tsx agent/engines/comfyui-standin.ts --port 8188 [--listen 127.0.0.1] [--step-ms 50]
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { triangleFan } from "../../common/glb.ts";
import { encodeRgb, tEXt } from "../../common/png.ts";

type Graph = Record<string, { class_type: string; inputs: Record<string, unknown> }>;
/** ComfyUI's queue item: [number, prompt_id, prompt, extra_data, outputs_to_execute]. */
type QueueItem = [number, string, Graph, { client_id?: string }, string[]];
interface HistoryEntry {
  prompt: QueueItem;
  outputs: Record<string, Record<string, { filename: string; subfolder: string; type: string }[]>>;
  status: { status_str: "success" | "error"; completed: boolean; messages: [string, Record<string, unknown>][] };
}

const OUTPUT_NODES = new Set(["SaveImage", "SaveGLB", "PreviewImage"]);
/** Loader nodes and the input naming a file in the input folder, as ComfyUI's own loaders. */
const LOADERS: Record<string, string> = { LoadImage: "image", LoadImageMask: "image", LoadAudio: "audio", LoadVideo: "file", LoadFile: "file" };

export const standinSettings = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  listen: z.string().default("127.0.0.1"),
  stepMs: z.coerce.number().min(0).max(60_000).default(50),
  dir: z.string().optional(),
});

export interface Standin {
  port: number;
  close(): Promise<void>;
}

export async function startStandin(input: z.input<typeof standinSettings>): Promise<Standin> {
  const s = standinSettings.parse(input);
  const root = s.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "comfy-standin-"));
  const dirs = { input: path.join(root, "input"), output: path.join(root, "output"), temp: path.join(root, "temp") };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });

  let counter = 0;
  const pending: QueueItem[] = [];
  let running: { item: QueueItem; interrupted: boolean } | null = null;
  const history = new Map<string, HistoryEntry>();
  const sockets = new Map<Duplex, string>();
  const log: { kind: string; prompt_id: string | null; at: number }[] = [];
  const runs: Record<string, number> = {};
  /** Set by /standin/hold: a run waits on it before its first step; /standin/release resolves it. */
  let hold: { released: Promise<void>; release: () => void } | null = null;

  function send(type: string, data: Record<string, unknown>, clientId?: string): void {
    const frame = wsFrame(JSON.stringify({ type, data }));
    for (const [sock, id] of sockets) if (!clientId || id === clientId) sock.write(frame);
  }
  const queueStatus = () => ({ status: { exec_info: { queue_remaining: pending.length + (running ? 1 : 0) } } });
  const broadcastStatus = () => send("status", queueStatus());

  async function execute(item: QueueItem): Promise<void> {
    const [, id, graph, extra] = item;
    const client = extra.client_id;
    running = { item, interrupted: false };
    runs[id] = (runs[id] ?? 0) + 1;
    log.push({ kind: "start", prompt_id: id, at: Date.now() });
    send("execution_start", { prompt_id: id, timestamp: Date.now() }, client);
    const outputs: HistoryEntry["outputs"] = {};
    const messages: HistoryEntry["status"]["messages"] = [["execution_start", { prompt_id: id, timestamp: Date.now() }]];
    const seed = Number(Object.values(graph).find((n) => n.inputs.seed !== undefined)?.inputs.seed ?? 0);
    try {
      for (const [nodeId, node] of Object.entries(graph)) {
        send("executing", { node: nodeId, display_node: nodeId, prompt_id: id }, client);
        const steps = typeof node.inputs.steps === "number" ? node.inputs.steps : 0;
        if (steps > 0 && hold) await hold.released;
        for (let i = 1; i <= steps; i++) {
          await new Promise((r) => setTimeout(r, s.stepMs));
          if (running.interrupted) throw new Interrupted(nodeId);
          send("progress", { value: i, max: steps, prompt_id: id, node: nodeId }, client);
        }
        if (running.interrupted) throw new Interrupted(nodeId);
        const out = writeOutputs(node, nodeId, graph, seed, id);
        if (out) {
          outputs[nodeId] = out;
          send("executed", { node: nodeId, display_node: nodeId, output: out, prompt_id: id }, client);
        }
      }
      messages.push(["execution_success", { prompt_id: id, timestamp: Date.now() }]);
      history.set(id, { prompt: item, outputs, status: { status_str: "success", completed: true, messages } });
      log.push({ kind: "done", prompt_id: id, at: Date.now() });
      send("executing", { node: null, prompt_id: id }, client);
      send("execution_success", { prompt_id: id, timestamp: Date.now() }, client);
    } catch (err) {
      const kind = err instanceof Interrupted ? "execution_interrupted" : "execution_error";
      const data = { prompt_id: id, node_id: err instanceof Interrupted ? err.node : null, exception_message: (err as Error).message, timestamp: Date.now() };
      messages.push([kind, data]);
      history.set(id, { prompt: item, outputs, status: { status_str: "error", completed: false, messages } });
      send(kind, data, client);
    } finally {
      running = null;
    }
  }

  function writeOutputs(node: Graph[string], nodeId: string, graph: Graph, seed: number, id: string): HistoryEntry["outputs"][string] | null {
    const prefix = String(node.inputs.filename_prefix ?? "ComfyUI").replace(/[^A-Za-z0-9_-]/g, "_");
    if (node.class_type === "SaveImage" || node.class_type === "PreviewImage") {
      const latent = Object.values(graph).find((n) => n.class_type === "EmptyLatentImage")?.inputs ?? {};
      const w = Number(latent.width ?? 64);
      const h = Number(latent.height ?? 64);
      const batch = Number(latent.batch_size ?? 1);
      const images = [];
      for (let b = 0; b < batch; b++) {
        const name = `${prefix}_${String(++counter).padStart(5, "0")}_.png`;
        const meta = [tEXt("prompt", JSON.stringify(graph)), tEXt("workflow", JSON.stringify({ id, nodes: Object.keys(graph) }))];
        const png = encodeRgb(w, h, (x, y) => [(x * 255) / w, (y * 255) / h, (seed * 37 + b * 91) % 256], meta);
        fs.writeFileSync(path.join(dirs.output, name), png);
        images.push({ filename: name, subfolder: "", type: "output" });
      }
      return { images };
    }
    if (node.class_type === "SaveGLB") {
      const name = `${prefix}_${String(++counter).padStart(5, "0")}_.glb`;
      const resolution = Number(Object.values(graph).find((n) => n.inputs.resolution !== undefined)?.inputs.resolution ?? 64);
      fs.writeFileSync(path.join(dirs.output, name), triangleFan(Math.max(3, resolution / 8), "comfyui-standin"));
      return { "3d": [{ filename: name, subfolder: "", type: "output" }] };
    }
    return null;
  }

  let pumping = false;
  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      for (let item = pending.shift(); item; item = pending.shift()) {
        broadcastStatus();
        await execute(item);
        broadcastStatus();
      }
    } finally {
      pumping = false;
    }
  }

  /** ComfyUI's checks before queueing: known outputs, files that exist. */
  function validate(graph: Graph): { error: Record<string, unknown>; node_errors: Record<string, unknown> } | string[] {
    const nodeErrors: Record<string, unknown> = {};
    const outputsToRun: string[] = [];
    for (const [nodeId, node] of Object.entries(graph)) {
      if (!node || typeof node.class_type !== "string" || typeof node.inputs !== "object") {
        return { error: { type: "invalid_prompt", message: `Cannot execute because node ${nodeId} has no class_type`, details: "", extra_info: {} }, node_errors: {} };
      }
      if (OUTPUT_NODES.has(node.class_type)) outputsToRun.push(nodeId);
      const field = LOADERS[node.class_type];
      if (field) {
        const name = String(node.inputs[field] ?? "");
        if (!name || name.includes("..") || !fs.existsSync(path.join(dirs.input, name))) {
          nodeErrors[nodeId] = {
            errors: [{ type: "value_not_in_list", message: "Value not in list", details: `${field}: '${name}' not in list`, extra_info: { input_name: field } }],
            class_type: node.class_type,
          };
        }
      }
    }
    if (!outputsToRun.length) return { error: { type: "prompt_no_outputs", message: "Prompt has no outputs", details: "", extra_info: {} }, node_errors: {} };
    if (Object.keys(nodeErrors).length) {
      return { error: { type: "prompt_outputs_failed_validation", message: "Prompt outputs failed validation", details: "", extra_info: {} }, node_errors: nodeErrors };
    }
    return outputsToRun;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const body = async (): Promise<Buffer> => {
      const parts: Buffer[] = [];
      for await (const c of req) parts.push(c as Buffer);
      return Buffer.concat(parts);
    };
    const p = url.pathname;
    if (req.method === "GET" && p === "/system_stats") {
      return json(200, {
        system: { os: process.platform, python_version: "stand-in", embedded_python: false, comfyui_version: "standin", ram_total: os.totalmem(), ram_free: os.freemem() },
        devices: [{ name: "cpu", type: "cpu", index: 0, vram_total: 0, vram_free: 0 }],
      });
    }
    if (req.method === "POST" && p === "/prompt") {
      let b: { prompt?: Graph; client_id?: string; prompt_id?: string; extra_data?: Record<string, unknown> };
      try {
        b = JSON.parse((await body()).toString("utf8")) as typeof b;
      } catch {
        return json(400, { error: { type: "invalid_prompt", message: "invalid JSON", details: "", extra_info: {} }, node_errors: {} });
      }
      if (!b.prompt || typeof b.prompt !== "object") return json(400, { error: { type: "no_prompt", message: "No prompt provided", details: "", extra_info: {} }, node_errors: {} });
      const v = validate(b.prompt);
      if (!Array.isArray(v)) return json(400, v);
      const id = b.prompt_id ?? randomUUID();
      const number = ++counter;
      pending.push([number, id, b.prompt, { ...b.extra_data, client_id: b.client_id }, v]);
      broadcastStatus();
      void pump();
      return json(200, { prompt_id: id, number, node_errors: {} });
    }
    if (req.method === "GET" && p === "/queue") {
      return json(200, { queue_running: running ? [running.item] : [], queue_pending: pending });
    }
    if (req.method === "POST" && p === "/queue") {
      const b = JSON.parse((await body()).toString("utf8") || "{}") as { delete?: string[]; clear?: boolean };
      for (const id of b.delete ?? []) {
        const at = pending.findIndex((q) => q[1] === id);
        log.push({ kind: "delete", prompt_id: id, at: Date.now() });
        if (at >= 0) pending.splice(at, 1);
      }
      if (b.clear) pending.splice(0);
      broadcastStatus();
      return json(200, {});
    }
    if (req.method === "POST" && p === "/interrupt") {
      const raw = (await body()).toString("utf8");
      const b = (raw ? JSON.parse(raw) : {}) as { prompt_id?: string };
      log.push({ kind: "interrupt", prompt_id: b.prompt_id ?? null, at: Date.now() });
      // With a prompt id, only that prompt; without, whatever is running (ComfyUI's rules).
      if (running && (!b.prompt_id || b.prompt_id === running.item[1])) running.interrupted = true;
      return json(200, {});
    }
    if (req.method === "GET" && (p === "/history" || p.startsWith("/history/"))) {
      const id = decodeURIComponent(p.slice("/history/".length));
      if (p === "/history") return json(200, Object.fromEntries(history));
      const h = history.get(id);
      return json(200, h ? { [id]: h } : {});
    }
    if (req.method === "GET" && p === "/view") {
      const type = url.searchParams.get("type") ?? "output";
      const base = dirs[type as keyof typeof dirs];
      const file = path.join(base ?? "", url.searchParams.get("subfolder") ?? "", url.searchParams.get("filename") ?? "");
      if (!base || !file.startsWith(base + path.sep) || !fs.existsSync(file)) return json(404, {});
      res.writeHead(200, { "content-type": file.endsWith(".png") ? "image/png" : "application/octet-stream" });
      fs.createReadStream(file).pipe(res);
      return;
    }
    if (req.method === "POST" && p === "/upload/image") {
      const form = await new Request("http://x/upload", { method: "POST", headers: req.headers as Record<string, string>, body: new Uint8Array(await body()) }).formData();
      const file = form.get("image");
      if (!file || typeof file === "string") return json(400, {});
      const name = path.basename(file.name);
      fs.writeFileSync(path.join(dirs.input, name), Buffer.from(await file.arrayBuffer()));
      return json(200, { name, subfolder: "", type: "input" });
    }
    if (req.method === "GET" && p === "/standin/log") return json(200, { events: log, runs });
    if (req.method === "POST" && p === "/standin/hold") {
      if (!hold) {
        let release!: () => void;
        const released = new Promise<void>((r) => (release = r));
        hold = { released, release };
      }
      return json(200, { held: true });
    }
    if (req.method === "POST" && p === "/standin/release") {
      hold?.release();
      hold = null;
      return json(200, { held: false });
    }
    json(404, {});
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: err.message }));
    });
  });
  server.on("upgrade", (req, sock: Duplex) => {
    const url = new URL(req.url ?? "/", "http://x");
    const key = req.headers["sec-websocket-key"];
    if (url.pathname !== "/ws" || typeof key !== "string") return void sock.destroy();
    const accept = createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
    sock.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    const clientId = url.searchParams.get("clientId") ?? randomUUID().replace(/-/g, "");
    sockets.set(sock, clientId);
    sock.write(wsFrame(JSON.stringify({ type: "status", data: { ...queueStatus(), sid: clientId } })));
    sock.on("data", (d: Buffer) => {
      // Only close matters: the API sends nothing else a server must act on.
      if ((d[0]! & 0x0f) === 0x8) sock.end(Buffer.from([0x88, 0]));
    });
    const drop = () => sockets.delete(sock);
    sock.on("close", drop);
    sock.on("error", drop);
  });
  await new Promise<void>((resolve) => server.listen(s.port, s.listen, resolve));
  return {
    port: (server.address() as import("node:net").AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const sock of sockets.keys()) sock.destroy();
        server.close(() => resolve());
      }),
  };
}

class Interrupted extends Error {
  constructor(readonly node: string) {
    super("Interrupted by user");
  }
}

/** One unmasked text frame, as a server sends. */
function wsFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) {
    head[0] = 0x81;
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else if (n >= 65536) {
    head[0] = 0x81;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

/** Flags as ComfyUI's main.py takes them; ones the stand-in has no use for are accepted and ignored. */
function parseArgs(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    const [k, v] = a.includes("=") ? [a.slice(2, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a.slice(2), argv[i + 1]?.startsWith("--") ? "" : (argv[++i] ?? "")];
    out[k.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())] = v;
  }
  return out;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const a = parseArgs(process.argv.slice(2));
  const s = await startStandin({ port: a.port ?? 8188, listen: a.listen || "127.0.0.1", stepMs: a.stepMs ?? process.env.COMFY_STANDIN_STEP_MS ?? 50 });
  console.log(`comfyui stand-in listening on ${a.listen || "127.0.0.1"}:${s.port}`);
  const stop = () => void s.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
