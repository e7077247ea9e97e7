// /mcp on the client port: Streamable HTTP (the SDK's transport, one per session), every request
// authenticated with an llmgw key or, where identity providers are configured, a person's access
// token from one of them (gateway/mcp/oauth.ts; a 401 names the protected-resource metadata), a
// session bound to the key (or person) that began it. What the SDK does not
// see (no key, a body that is not JSON, an unknown session, a method /mcp does not take) is
// answered here as JSON-RPC errors. Sessions answer with SSE (progress streams) unless begun at
// /mcp?response=json; idle ones are closed.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../../common/logging.ts";
import { keyFromHeaders, type KeyCache } from "../auth/key-cache.ts";
import type { McpDeps } from "./calls.ts";
import type { McpCaller } from "./caller-key.ts";
import { isJwt, METADATA_PATH, type McpOAuth } from "./oauth.ts";
import { sessionServer, type SessionState } from "./session-server.ts";

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const IDLE_MS = 30 * 60_000;
const MAX_SESSIONS = 10_000;

interface Session extends SessionState {
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
}

/** Whether a request is for /mcp (any query string). */
export const isMcpPath = (url: string | undefined) => url === "/mcp" || url?.startsWith("/mcp?") === true || url === "/mcp/";

function rpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      // Past the bound the rest is read and dropped, so the client reads the 413 (the connection
      // then closes); a body past 16 times it ends the connection instead.
      if (size > 16 * MAX_BODY_BYTES) req.destroy();
      else if (size > MAX_BODY_BYTES) reject(new Error("too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A single tools/call request whose params are not a name and an arguments object. */
export function badToolCall(body: unknown): { id: string | number; message: string } | null {
  if (!isObject(body) || body.jsonrpc !== "2.0" || body.method !== "tools/call" || (typeof body.id !== "string" && typeof body.id !== "number")) return null;
  const p = body.params;
  const message = !isObject(p)
    ? "params must be an object with the tool's name"
    : typeof p.name !== "string" || p.name === ""
      ? "params.name must be the tool's name"
      : p.arguments !== undefined && !isObject(p.arguments)
        ? "params.arguments must be an object"
        : null;
  return message ? { id: body.id, message } : null;
}

export class McpHttp {
  private sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: McpDeps,
    private readonly keys: KeyCache,
    /** null: keys only (no identity provider is configured). */
    private readonly oauth: McpOAuth | null = null,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private async authenticate(req: IncomingMessage, res: ServerResponse): Promise<McpCaller | null> {
    const raw = keyFromHeaders(req.headers);
    let why: string | null;
    if (raw && this.oauth && isJwt(raw)) {
      const caller = await this.oauth.verify(raw);
      if (typeof caller !== "string") return caller;
      why = caller;
    } else {
      const info = raw ? await this.keys.lookup(raw) : null;
      why = !raw ? "no API key: send it as `Authorization: Bearer <key>`" : !info ? "invalid API key" : info.revoked ? "this API key was revoked" : info.expiresAt !== null && info.expiresAt <= Date.now() ? "this API key has expired" : null;
      if (why === null) return info;
    }
    // RFC 6750 and RFC 9728 §5.1: where to find how to sign in.
    const challenge = `Bearer realm="llmgw"${this.oauth ? `, resource_metadata="${this.oauth.metadataUrl()}"` : ""}${raw ? `, error="invalid_token", error_description="${why.replace(/["\\]/g, "'")}"` : ""}`;
    rpcError(res, 401, ErrorCode.InvalidRequest, why, { "www-authenticate": challenge });
    return null;
  }

  /** GET /.well-known/oauth-protected-resource[/mcp]: the metadata, when sign-in is configured; else on to `next`. */
  metadata(req: IncomingMessage, res: ServerResponse, next: (req: IncomingMessage, res: ServerResponse) => void): void {
    const path = (req.url ?? "").split("?")[0];
    if (!this.oauth || (path !== METADATA_PATH && path !== `${METADATA_PATH}/mcp`) || (req.method !== "GET" && req.method !== "HEAD")) return next(req, res);
    this.oauth.metadata().then(
      (m) => res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300", "access-control-allow-origin": "*" }).end(JSON.stringify(m)),
      (err: unknown) => {
        log.warn("protected-resource metadata failed", { error: (err as Error).message });
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal error" }));
      },
    );
  }

  /** The node request listener for /mcp. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.serve(req, res).catch((err: unknown) => {
      log.warn("mcp request failed", { error: (err as Error).message });
      rpcError(res, 500, ErrorCode.InternalError, "internal error");
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST" && req.method !== "GET" && req.method !== "DELETE") return rpcError(res, 405, ErrorCode.InvalidRequest, `${req.method} is not allowed on /mcp; allowed: POST, GET, DELETE`, { allow: "POST, GET, DELETE" });
    let body: unknown;
    if (req.method === "POST") {
      let text: string;
      try {
        text = await readBody(req);
      } catch {
        return rpcError(res, 413, ErrorCode.InvalidRequest, `the request body is larger than ${MAX_BODY_BYTES} bytes`, { connection: "close" });
      }
      try {
        body = JSON.parse(text);
      } catch {
        return rpcError(res, 400, ErrorCode.ParseError, "Parse error: the body is not JSON");
      }
    }
    const key = await this.authenticate(req, res);
    if (!key) return;
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const s = this.sessions.get(id);
      // Another key's session reads as unknown: a session id is no credential.
      if (!s || s.key.id !== key.id) return rpcError(res, 404, ErrorCode.InvalidRequest, "Session not found: begin a new one with initialize");
      s.key = key;
      s.lastUsed = Date.now();
      const bad = badToolCall(body);
      // The SDK's server would answer these -32603 with a zod dump; the spec says -32602. JSON is
      // an answer a POST may get in any session.
      if (bad) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: bad.id, error: { code: ErrorCode.InvalidParams, message: bad.message } }));
      return s.transport.handleRequest(req, res, body);
    }
    if (id !== undefined) return rpcError(res, 400, ErrorCode.InvalidRequest, "one mcp-session-id header, please");
    if (req.method !== "POST" || !isInitializeRequest(body)) return rpcError(res, 400, ErrorCode.InvalidRequest, "Bad Request: no mcp-session-id; a session begins with an initialize request");
    if (this.sessions.size >= MAX_SESSIONS) this.sweep(true);
    await this.begin(req, res, key, body);
  }

  private async begin(req: IncomingMessage, res: ServerResponse, key: McpCaller, body: unknown): Promise<void> {
    const json = new URL(req.url ?? "/mcp", "http://x").searchParams.get("response") === "json";
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: json,
      // Called while initialize is handled below, after `session` is made.
      onsessioninitialized: (sid) => void this.sessions.set(sid, session),
    });
    const session: Session = { key, transport, lastUsed: Date.now() };
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    const server = sessionServer(this.deps, session);
    server.onerror = (err) => log.debug("mcp session error", { error: err.message });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Ends idle sessions (all the oldest half when `full`). */
  private sweep(full = false): void {
    const now = Date.now();
    const byAge = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    byAge.forEach((s, i) => {
      if (now - s.lastUsed > IDLE_MS || (full && i < byAge.length / 2)) void s.transport.close();
    });
  }

  sessionCount(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
    this.sessions.clear();
  }
}
