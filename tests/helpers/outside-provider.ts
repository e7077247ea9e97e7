// A stand-in for an outside OpenAI-compatible provider (OpenAI itself, Kong, another gateway): it
// checks `Authorization: Bearer <key>` as OpenAI does and answers in OpenAI's error shape — 401
// for a revoked key, 429 with Retry-After for one at its limit — and passes everything else to a
// real sim engine behind it. Its base URL has a path (`/openai/v1`), as a proxied provider's does.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startSim, type SimHandle } from "../../agent/engines/sim/server.ts";

export interface OutsideProvider {
  /** What the catalog's `base_url` is set to. */
  baseUrl: string;
  /** Requests seen, by the key they carried. */
  hits: Map<string, number>;
  /** The `model` of every request passed on. */
  models: string[];
  close(): Promise<void>;
}

const PREFIX = "/openai/v1";

export async function startOutsideProvider(opts: { model: string; revoked?: string[]; limited?: string[]; retryAfterS?: number }): Promise<OutsideProvider> {
  const sim: SimHandle = await startSim({ port: 0, host: "127.0.0.1", model: opts.model });
  const hits = new Map<string, number>();
  const models: string[] = [];
  const error = (res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ error: body }));
  };
  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? "";
    const key = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    hits.set(key, (hits.get(key) ?? 0) + 1);
    if (!key || opts.revoked?.includes(key)) {
      return error(res, 401, { message: "Incorrect API key provided. You can find your API key at https://platform.example.com/account/api-keys.", type: "invalid_request_error", param: null, code: "invalid_api_key" });
    }
    if (opts.limited?.includes(key)) {
      return error(res, 429, { message: "Rate limit reached for requests. Please try again later.", type: "requests", param: null, code: "rate_limit_exceeded" }, { "retry-after": String(opts.retryAfterS ?? 20) });
    }
    if (!req.url?.startsWith(PREFIX + "/")) return error(res, 404, { message: `Unknown path ${req.url}`, type: "invalid_request_error", param: null, code: "unknown_url" });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      try {
        models.push(String((JSON.parse(body.toString("utf8")) as { model?: unknown }).model));
      } catch {
        models.push("(unreadable)");
      }
      const up = http.request(
        { host: "127.0.0.1", port: sim.port, method: req.method, path: `/v1${req.url!.slice(PREFIX.length)}`, headers: { "content-type": "application/json", "content-length": body.length } },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, { "content-type": upRes.headers["content-type"] ?? "application/json" });
          upRes.pipe(res);
        },
      );
      up.on("error", () => error(res, 502, { message: "upstream engine unreachable", type: "server_error", param: null, code: null }));
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${PREFIX}`,
    hits,
    models,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await sim.close();
    },
  };
}
