// How ctl reaches the admin API: URL and token from LLMGW_ADMIN_URL / LLMGW_ADMIN_TOKEN, else
// from the files `llmgw up` and the gateway write under the data directory.
import fs from "node:fs";
import path from "node:path";
import { config } from "../common/config.ts";

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

export function adminClient(): AdminClient {
  const c = config();
  const files = fromFiles(c.dataDir);
  const base = c.LLMGW_ADMIN_URL ?? files.url ?? `http://${c.LLMGW_ADMIN_HOST}:${c.LLMGW_ADMIN_PORT}`;
  const token = c.LLMGW_ADMIN_TOKEN ?? files.token;
  if (!token) throw new CtlError(`no admin token: set LLMGW_ADMIN_TOKEN or run where ${c.dataDir}/admin-token exists`);
  return adminClientFor(base, token);
}

/** A client for the admin API at `baseUrl`; errors carry the API's own message. */
export function adminClientFor(baseUrl: string, token: string): AdminClient {
  const base = baseUrl.replace(/\/$/, "");
  async function request<T>(method: string, p: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${base}/api/v1${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new CtlError(`cannot reach the admin API at ${base}: ${(err as Error).message}`, 0);
    }
    const text = await res.text();
    const json = text ? (JSON.parse(text) as T & { error?: { message: string; field?: string | null } }) : ({} as T & { error?: undefined });
    if (!res.ok) throw new CtlError(json.error ? json.error.message : `admin API answered HTTP ${res.status}`, res.status);
    return json;
  }
  return { request, get: (p) => request("GET", p), post: (p, b) => request("POST", p, b) };
}
