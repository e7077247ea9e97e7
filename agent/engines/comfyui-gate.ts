// The key-checking gate in front of ComfyUI, which checks no keys itself. The agent starts the gate
// on the replica's port; the gate starts ComfyUI (or its stand-in) as its child on a loopback port
// of its own and passes on only requests that carry the replica's key (`Authorization: Bearer`),
// the /ws progress socket included, and only ComfyUI's API paths that jobs use. The key comes in
// the environment (LLMGW_ENGINE_API_KEY), never on a command line, and ComfyUI does not get it.
// GET /health answers without the key (the agent's readiness probe): 200 once ComfyUI answers.
//
//   LLMGW_ENGINE_API_KEY=… node --import tsx agent/engines/comfyui-gate.ts --port 18000 [--host 127.0.0.1] -- python3 ComfyUI/main.py …
import { spawn } from "node:child_process";
import { createHash, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import { ENGINE_API_KEY_ENV } from "./adapter.ts";

/** The API paths jobs use (queueing, waiting, fetching, cancelling, uploading), plus the stand-in's test paths. */
const PASSED = [/^\/prompt$/, /^\/queue$/, /^\/interrupt$/, /^\/history(\/[^/]+)?$/, /^\/view$/, /^\/upload\/(image|mask)$/, /^\/system_stats$/, /^\/object_info(\/[^/]+)?$/, /^\/standin\/(log|hold|release)$/];

const digest = (s: string) => createHash("sha256").update(s).digest();

export interface Gate {
  port: number;
  close(): Promise<void>;
}

/** Serves the gate on host:port in front of ComfyUI at 127.0.0.1:innerPort. */
export async function startGate(opts: { key: string; host: string; port: number; innerPort: number }): Promise<Gate> {
  const want = digest(`Bearer ${opts.key}`);
  const allowed = (auth: string | undefined) => timingSafeEqual(digest(auth ?? ""), want);
  const innerHeaders = (h: http.IncomingHttpHeaders) => {
    const out = { ...h };
    delete out.authorization;
    out.host = `127.0.0.1:${opts.innerPort}`;
    return out;
  };
  const refuse = (res: http.ServerResponse, status: number, message: string) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message, type: status === 401 ? "authentication_error" : "not_found" } }));
  };

  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "GET" && p === "/health") {
      const probe = http.get({ host: "127.0.0.1", port: opts.innerPort, path: "/system_stats", timeout: 2000 }, (r) => {
        r.resume();
        res.writeHead(r.statusCode === 200 ? 200 : 503, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: r.statusCode === 200 }));
      });
      probe.on("timeout", () => probe.destroy(new Error("timeout")));
      probe.on("error", () => void (res.headersSent || (res.writeHead(503, { "content-type": "application/json" }), res.end('{"ok":false}'))));
      return;
    }
    if (!allowed(req.headers.authorization)) return refuse(res, 401, "missing or wrong key for this ComfyUI replica");
    if (!PASSED.some((re) => re.test(p))) return refuse(res, 404, `the gate does not pass ${p}`);
    const up = http.request({ host: "127.0.0.1", port: opts.innerPort, method: req.method, path: req.url, headers: innerHeaders(req.headers) }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on("error", (err) => {
      if (!res.headersSent) refuse(res, 502, `ComfyUI did not answer: ${err.message}`);
      else res.destroy();
    });
    req.pipe(up);
  });

  // The progress socket: the same key, then the raw upgrade passed through both ways.
  server.on("upgrade", (req: http.IncomingMessage, sock: Duplex, head: Buffer) => {
    const p = new URL(req.url ?? "/", "http://x").pathname;
    const status = !allowed(req.headers.authorization) ? "401 Unauthorized" : p !== "/ws" ? "404 Not Found" : null;
    if (status) {
      sock.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const up = net.connect(opts.innerPort, "127.0.0.1", () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (const [k, v] of Object.entries(innerHeaders(req.headers))) for (const one of [v].flat()) if (one !== undefined) lines.push(`${k}: ${one}`);
      up.write(lines.join("\r\n") + "\r\n\r\n");
      if (head.length) up.write(head);
      sock.pipe(up).pipe(sock);
    });
    const drop = () => (sock.destroy(), up.destroy());
    up.on("error", drop);
    sock.on("error", drop);
    up.on("close", () => sock.destroy());
    sock.on("close", () => up.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, resolve);
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A free loopback port for ComfyUI behind the gate. */
function loopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function main(argv: string[]): Promise<void> {
  const split = argv.indexOf("--");
  const own = argv.slice(0, split < 0 ? argv.length : split);
  const [command, ...args] = split < 0 ? [] : argv.slice(split + 1);
  const flag = (name: string) => {
    const i = own.indexOf(name);
    return i >= 0 ? own[i + 1] : undefined;
  };
  const port = Number(flag("--port"));
  // An engine child: its key comes in its environment from the agent, not through llmgw's config.
  const key = process.env[ENGINE_API_KEY_ENV];
  if (!command || !Number.isInteger(port)) throw new Error("usage: comfyui-gate --port N [--host H] -- COMMAND ARGS…");
  if (!key) throw new Error(`${ENGINE_API_KEY_ENV} is not set: the gate will not run ComfyUI open to anyone`);
  delete process.env[ENGINE_API_KEY_ENV];

  const innerPort = await loopbackPort();
  // Same process group as the gate, so the agent stopping the replica stops ComfyUI too.
  const child = spawn(command, [...args, "--listen", "127.0.0.1", "--port", String(innerPort)], { stdio: ["ignore", "inherit", "inherit"], env: process.env });
  child.once("exit", (code, signal) => {
    console.log(`comfyui-gate: ComfyUI exited (${signal ?? code}); the gate goes too`);
    process.exit(code ?? 1);
  });
  // Loopback unless told: the agent always says where (LLMGW_ENGINE_HOST).
  const host = flag("--host") ?? "127.0.0.1";
  const gate = await startGate({ key, host, port, innerPort });
  console.log(`comfyui-gate listening on ${host}:${gate.port}, ComfyUI (pid ${child.pid}) on 127.0.0.1:${innerPort}`);
  const stop = () => {
    child.kill("SIGTERM");
    void gate.close();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: Error) => {
    console.error(`comfyui-gate: ${err.message}`);
    process.exit(2);
  });
}
