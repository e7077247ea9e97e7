// Real tool servers for the MCP gateway's tests: MCP servers built with the official SDK over
// Streamable HTTP (with sessions, so a cancellation reaches the server running the call), and a
// plain REST service with its OpenAPI document. Each records what reached it.
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface Upstream {
  url: string;
  /** The headers of each tools/call that reached it. */
  calls: { tool: string; headers: http.IncomingHttpHeaders }[];
  /** Answers every request 503 while true. */
  down: boolean;
  /** Resolved with each `wait` call's abort once the caller cancels it. */
  cancelled: Promise<void>;
  started: Promise<void>;
  close(): Promise<void>;
}

function listen(handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.listen(0, "127.0.0.1", () => resolve(s));
  });
}

const closing = (s: http.Server) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())));

/** An MCP server with `tools` (name → text answer), plus echo-ish tools every test server has. */
export async function startMcpUpstream(tools: string[], planted?: string): Promise<Upstream> {
  let markStarted!: () => void;
  let markCancelled!: () => void;
  const u: Upstream = {
    url: "",
    calls: [],
    down: false,
    started: new Promise((r) => (markStarted = r)),
    cancelled: new Promise((r) => (markCancelled = r)),
    close: async () => undefined,
  };
  let current: http.IncomingHttpHeaders = {};
  const build = () => {
    const s = new McpServer({ name: "test-upstream", version: "1" });
    for (const t of tools)
      s.registerTool(t, { description: `the ${t} tool`, inputSchema: { text: z.string().optional() } }, ({ text }) => {
        u.calls.push({ tool: t, headers: current });
        return { content: [{ type: "text", text: `${t}: ${text ?? ""} ${planted ?? ""}`.trim() }] };
      });
    s.registerTool("whoami", { description: "the x-llmgw-* and authorization headers it was called with" }, () => {
      u.calls.push({ tool: "whoami", headers: current });
      const seen = Object.fromEntries(Object.entries(current).filter(([k]) => k.startsWith("x-llmgw-") || k === "authorization"));
      return { content: [{ type: "text", text: JSON.stringify(seen) }] };
    });
    s.registerTool("slow", { description: "reports progress three times, then answers" }, async (extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= 3; i++) {
        if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: 3, message: `step ${i}` } });
        await new Promise((r) => setTimeout(r, 20));
      }
      return { content: [{ type: "text", text: "done" }] };
    });
    s.registerTool("wait", { description: "waits until cancelled" }, (extra) => {
      markStarted();
      return new Promise<{ content: { type: "text"; text: string }[] }>((resolve) => {
        extra.signal.addEventListener("abort", () => {
          markCancelled();
          resolve({ content: [{ type: "text", text: "cancelled" }] });
        });
      });
    });
    return s;
  };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = await listen((req, res) => {
    if (u.down) return void res.writeHead(503).end("down");
    current = req.headers;
    const sid = req.headers["mcp-session-id"];
    const known = typeof sid === "string" ? sessions.get(sid) : undefined;
    if (known) return void known.handleRequest(req, res);
    if (sid !== undefined) return void res.writeHead(404).end();
    const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, t) });
    void build().connect(t).then(() => t.handleRequest(req, res));
  });
  u.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  u.close = () => closing(server);
  return u;
}

export const EMPLOYEES_OPENAPI = {
  openapi: "3.0.3",
  info: { title: "HR", version: "1" },
  paths: {
    "/employees/{id}": {
      get: {
        operationId: "getEmployee",
        summary: "One employee by id",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }, { name: "fields", in: "query", schema: { type: "string" } }],
        responses: { "200": { description: "The employee", content: { "application/json": { schema: { $ref: "#/components/schemas/Employee" } } } } },
      },
    },
    "/employees": {
      post: {
        operationId: "addEmployee",
        requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/Employee" } } } },
        responses: { "201": { description: "Added" } },
      },
    },
  },
  components: { schemas: { Employee: { type: "object", properties: { id: { type: "string" }, name: { type: "string" } }, required: ["name"] } } },
};

/** A REST service for EMPLOYEES_OPENAPI: GET /employees/{id}, POST /employees. */
export async function startRestService(): Promise<{ url: string; headers: http.IncomingHttpHeaders[]; close(): Promise<void> }> {
  const headers: http.IncomingHttpHeaders[] = [];
  const people = new Map([["7", { id: "7", name: "Ada" }]]);
  const server = await listen((req, res) => {
    headers.push(req.headers);
    const url = new URL(req.url ?? "/", "http://x");
    const m = /^\/employees\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && m) {
      const p = people.get(decodeURIComponent(m[1]!));
      return void res.writeHead(p ? 200 : 404, { "content-type": "application/json" }).end(JSON.stringify(p ?? { error: "no such employee" }));
    }
    if (req.method === "POST" && url.pathname === "/employees") {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const e = JSON.parse(body) as { name: string };
        const id = String(people.size + 10);
        people.set(id, { id, name: e.name });
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id, name: e.name }));
      });
      return;
    }
    res.writeHead(404).end();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, headers, close: () => closing(server) };
}
