// /mcp against malformed JSON-RPC messages and sessions: each is answered with a JSON-RPC error
// (HTTP 4xx, or 200 carrying the error inside a session), never a crash or a hang; afterwards the
// gateway still serves a well-formed session.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startPlatform, type Platform } from "../helpers/platform.ts";
import { keyMaker, type NewKey } from "../helpers/platform-setup.ts";
import { startMcpUpstream, type Upstream } from "../helpers/mcp-upstreams.ts";

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
const ACCEPT = "application/json, text/event-stream";

interface Case {
  name: string;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Sent inside a session begun with ?response=json. */
  session?: boolean;
  status: number;
  /** The JSON-RPC error code, or those allowed (the SDK's transport answers -32700 for a message that is JSON but not JSON-RPC). */
  code?: number | number[];
}

describe("/mcp and malformed messages", () => {
  let p: Platform;
  let up: Upstream;
  let key: NewKey, other: NewKey;

  const post = (body: string, headers: Record<string, string> = {}, method = "POST", query = "") =>
    fetch(`${p.clientUrl}/mcp${query}`, { method, headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", accept: ACCEPT, ...headers }, ...(method === "GET" || method === "DELETE" ? {} : { body }) });

  /** A session answering in JSON, and its id. */
  const session = async (k = key.key) => {
    const r = await fetch(`${p.clientUrl}/mcp?response=json`, { method: "POST", headers: { authorization: `Bearer ${k}`, "content-type": "application/json", accept: ACCEPT }, body: JSON.stringify(INIT) });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /application\/json/, "answered in JSON, not SSE");
    const sid = r.headers.get("mcp-session-id")!;
    const done = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), { "mcp-session-id": sid });
    assert.equal(done.status, 202);
    return sid;
  };

  before(async () => {
    up = await startMcpUpstream(["search"]);
    p = await startPlatform({ processes: ["gateway"] });
    const newKey = keyMaker((a) => p.ctl(a));
    [key, other] = [await newKey({ project: "raw" }), await newKey({ project: "raw" })];
    assert.equal((await p.ctl(["mcp", "add", "jira", "--url", up.url])).code, 0);
    assert.equal((await p.ctl(["keys", "limits", key.id, "--tools", "jira.*"])).code, 0);
  });

  after(async () => {
    await p?.stop();
    await up?.close();
  });

  const deep = "[".repeat(200_000) + "]".repeat(200_000);
  const cases: Case[] = [
    { name: "a body that is not JSON", body: "{oops", status: 400, code: -32700 },
    { name: "an empty body", body: "", status: 400, code: -32700 },
    { name: "arrays nested 200000 deep", body: deep, status: 400, code: -32600 },
    { name: "null", body: "null", status: 400, code: -32600 },
    { name: "a number", body: "42", status: 400, code: -32600 },
    { name: "an empty batch", body: "[]", status: 400, code: -32600 },
    { name: "initialize without jsonrpc", body: JSON.stringify({ ...INIT, jsonrpc: undefined }), status: 400, code: [-32600, -32700] },
    { name: "initialize with jsonrpc 1.0", body: JSON.stringify({ ...INIT, jsonrpc: "1.0" }), status: 400, code: [-32600, -32700] },
    { name: "initialize without params", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" }), status: 400, code: -32600 },
    { name: "initialize with an object id", body: JSON.stringify({ ...INIT, id: { a: 1 } }), status: 400, code: [-32600, -32700] },
    { name: "tools/list without a session", body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), status: 400, code: -32600 },
    { name: "an unknown session", body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), headers: { "mcp-session-id": "no-such-session" }, status: 404 },
    { name: "no key", body: JSON.stringify(INIT), headers: { authorization: "" }, status: 401 },
    { name: "a wrong key", body: JSON.stringify(INIT), headers: { authorization: "Bearer llmgw-not-a-key" }, status: 401 },
    { name: "PUT", method: "PUT", body: JSON.stringify(INIT), status: 405 },
    { name: "GET without a session", method: "GET", status: 400 },
    { name: "DELETE without a session", method: "DELETE", status: 400 },
    { name: "a body past 4 MiB", body: JSON.stringify({ ...INIT, pad: "x".repeat(5 * 1024 * 1024) }), status: 413 },
    { name: "initialize not accepting SSE", body: JSON.stringify(INIT), headers: { accept: "application/json" }, status: 406 },
    { name: "initialize as text/plain", body: JSON.stringify(INIT), headers: { "content-type": "text/plain" }, status: 415 },
    { name: "a batch beginning with initialize", body: JSON.stringify([INIT, { jsonrpc: "2.0", id: 2, method: "tools/list" }]), status: 400, code: -32600 },
    { name: "in a session: initialize again", session: true, body: JSON.stringify(INIT), status: 400, code: -32600 },
    { name: "in a session: a message with no method", session: true, body: JSON.stringify({ jsonrpc: "2.0", id: 3 }), status: 400 },
    { name: "in a session: a method nobody has", session: true, body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "foo/bar" }), status: 200, code: -32601 },
    { name: "in a session: tools/call without a name", session: true, body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: {} }), status: 200, code: -32602 },
    { name: "in a session: tools/call with string arguments", session: true, body: JSON.stringify({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "jira.search", arguments: "x" } }), status: 200, code: -32602 },
    { name: "in a session: an unknown tool", session: true, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "nope.nothing", arguments: {} } }), status: 200, code: -32602 },
    { name: "in a session: a tool without its server's prefix", session: true, body: JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "search", arguments: {} } }), status: 200, code: -32602 },
  ];

  it(`answers ${cases.length} malformed requests with JSON-RPC errors`, async () => {
    assert.ok(cases.length >= 20);
    const sid = await session();
    const wrong: string[] = [];
    for (const c of cases) {
      const r = await post(c.body ?? "", { ...(c.session && { "mcp-session-id": sid }), ...c.headers }, c.method);
      const text = await r.text();
      let body: { jsonrpc?: string; error?: { code: number; message: string } } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        // Reported below as not JSON-RPC.
      }
      const codes = c.code === undefined ? null : [c.code].flat();
      const ok = r.status === c.status && body.jsonrpc === "2.0" && typeof body.error?.message === "string" && (codes === null || codes.includes(body.error.code));
      if (!ok) wrong.push(`${c.name}: ${r.status} ${text.slice(0, 200)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it("a session is bound to its key: another key's request reads as no session", async () => {
    const sid = await session();
    const r = await fetch(`${p.clientUrl}/mcp`, { method: "POST", headers: { authorization: `Bearer ${other.key}`, "content-type": "application/json", accept: ACCEPT, "mcp-session-id": sid }, body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }) });
    assert.equal(r.status, 404);
    assert.equal(((await r.json()) as { error: { code: number } }).error.code, -32600);
  });

  it("a session ended with DELETE is gone", async () => {
    const sid = await session();
    assert.equal((await post("", { "mcp-session-id": sid }, "DELETE")).status, 200);
    assert.equal((await post(JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/list" }), { "mcp-session-id": sid })).status, 404);
  });

  it("afterwards the gateway serves a well-formed session", async () => {
    const c = new Client({ name: "after", version: "1" });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key.key}` } } }));
    assert.deepEqual((await c.listTools()).tools.map((t) => t.name).sort(), ["jira.search", "jira.slow", "jira.wait", "jira.whoami"]);
    await c.close();
  });
});
