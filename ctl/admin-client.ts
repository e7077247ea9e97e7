// How ctl reaches the admin API: URL and token from LLMGW_ADMIN_URL / LLMGW_ADMIN_TOKEN, else
// from the files `llmgw up` and the gateway write under the data directory.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { ctlSession } from "../common/ctl-session.ts";
import { ctlSettings } from "../common/ctl-settings.ts";

export class CtlError extends Error {
  /** The admin API's HTTP status; 0 when it could not be reached; undefined for ctl's own errors. */
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

export interface AdminClient {
  request<T>(method: string, p: string, body?: unknown): Promise<T>;
  get<T>(p: string): Promise<T>;
  post<T>(p: string, body: unknown): Promise<T>;
  /** A GET whose answer is text written to `out` as it comes (an engine's log, followed). */
  stream(p: string, out: (chunk: Buffer) => void): Promise<void>;
}

function fromFiles(dataDir: string): { url?: string; token?: string } {
  try {
    const e = JSON.parse(fs.readFileSync(path.join(dataDir, "endpoints.json"), "utf8")) as { adminUrl?: string; adminToken?: string };
    return { url: e.adminUrl, token: e.adminToken };
  } catch {
    try {
      return { token: fs.readFileSync(path.join(dataDir, "admin-token"), "utf8").trim() };
    } catch {
      return {};
    }
  }
}

/** Where the admin API is: LLMGW_ADMIN_URL, the data directory's endpoints.json, else host and port. */
export function adminBaseUrl(): string {
  const c = ctlSettings();
  return c.LLMGW_ADMIN_URL ?? fromFiles(c.dataDir).url ?? `http://${c.LLMGW_ADMIN_HOST}:${c.LLMGW_ADMIN_PORT}`;
}

export function adminClient(): AdminClient {
  const c = ctlSettings();
  const files = fromFiles(c.dataDir);
  const base = adminBaseUrl();
  // A person signed in (ctl login, or LLMGW_SESSION) acts as themselves, unless an admin token is given.
  if (!c.LLMGW_ADMIN_TOKEN) {
    let session;
    try {
      session = ctlSession();
    } catch (err) {
      throw new CtlError((err as Error).message);
    }
    if (session) return adminClientFor(session.url ?? base, session.token);
  }
  const token = c.LLMGW_ADMIN_TOKEN ?? files.token;
  if (!token) throw new CtlError(`no admin token: set LLMGW_ADMIN_TOKEN or run where ${c.dataDir}/admin-token exists`);
  return adminClientFor(base, token);
}

/**
 * One request over node:http(s). Not fetch: its first use loads undici and compiles its WebAssembly
 * HTTP parser, which was most of a short ctl command's CPU (docs/benchmarks.md, "ctl's start").
 * A connection of its own (no keep-alive pool): no idle socket can go stale between two calls.
 */
export async function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<{ status: number; text: string }> {
  const mod = url.protocol === "https:" ? await import("node:https") : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A client for the admin API at `baseUrl`; errors carry the API's own message. */
export function adminClientFor(baseUrl: string, token: string): AdminClient {
  const base = baseUrl.replace(/\/$/, "");
  async function request<T>(method: string, p: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (payload !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) });
    let res: { status: number; text: string };
    try {
      res = await send(new URL(`${base}/api/v1${p}`), method, headers, payload);
    } catch (err) {
      throw new CtlError(`cannot reach the admin API at ${base}: ${(err as Error).message}`, 0);
    }
    const json = res.text ? (JSON.parse(res.text) as T & { error?: { message: string; field?: string | null } }) : ({} as T & { error?: undefined });
    if (res.status < 200 || res.status >= 300) throw new CtlError(json.error ? json.error.message : `admin API answered HTTP ${res.status}`, res.status);
    return json;
  }
  const stream = (p: string, out: (chunk: Buffer) => void): Promise<void> =>
    new Promise((resolve, reject) => {
      const url = new URL(`${base}/api/v1${p}`);
      const req = (url.protocol === "https:" ? import("node:https") : Promise.resolve(http)).then((mod) =>
        mod
          .request(url, { method: "GET", headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
            const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
            const errChunks: Buffer[] = [];
            res.on("data", (c: Buffer) => (ok ? out(c) : errChunks.push(c)));
            res.on("error", reject);
            res.on("end", () => {
              if (ok) return resolve();
              const text = Buffer.concat(errChunks).toString("utf8");
              let message = `admin API answered HTTP ${res.statusCode}`;
              try {
                message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
              } catch {
                // not JSON: the status says it
              }
              reject(new CtlError(message, res.statusCode));
            });
          })
          .on("error", (err) => reject(new CtlError(`cannot reach the admin API at ${base}: ${err.message}`, 0)))
          .end(),
      );
      req.catch(reject);
    });
  return { request, get: (p) => request("GET", p), post: (p, b) => request("POST", p, b), stream };
}
