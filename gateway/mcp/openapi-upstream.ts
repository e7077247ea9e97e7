// A REST service described by an OpenAPI 3 document, as tools: each operation is one, named by its
// operationId (else METHOD_path), its input schema built from its parameters and its JSON body
// (local $refs inlined). A call is one HTTP request; a 4xx is the tool's error for the caller to
// read, a 5xx or no answer a failure of the server.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { callerHeaders, credentialHeaders } from "./caller.ts";
import type { McpServerSpec } from "./spec.ts";
import { UpstreamFailure, type CallOptions, type Upstream } from "./upstream.ts";

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;
type Json = Record<string, unknown>;

interface Param {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: Json;
  description?: string;
}

export interface Operation {
  tool: Tool;
  method: string;
  path: string;
  params: Param[];
  hasBody: boolean;
}

/** Local `#/…` references replaced by what they point at, to a bounded depth (cycles end as {}). */
function inline(doc: Json, v: unknown, depth = 0): unknown {
  if (depth > 20 || v === null || typeof v !== "object") return depth > 20 ? {} : v;
  if (Array.isArray(v)) return v.map((x) => inline(doc, x, depth + 1));
  const ref = (v as Json)["$ref"];
  if (typeof ref === "string") {
    if (!ref.startsWith("#/")) return {};
    let target: unknown = doc;
    for (const part of ref.slice(2).split("/")) target = (target as Json | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    return inline(doc, target ?? {}, depth + 1);
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inline(doc, x, depth + 1)]));
}

const toolName = (method: string, path: string, id: unknown) =>
  (typeof id === "string" && /^[A-Za-z0-9_.-]{1,100}$/.test(id) ? id : `${method}_${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "")}`).slice(0, 100);

export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item?.[method] as Json | undefined;
      if (!op || typeof op !== "object") continue;
      const params = [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])].map((p) => inline(doc, p) as Param).filter((p) => p && typeof p.name === "string" && p.in !== "cookie");
      const body = inline(doc, (op.requestBody as Json | undefined)?.content) as Record<string, { schema?: Json }> | undefined;
      const bodySchema = body?.["application/json"]?.schema;
      const properties: Record<string, object> = Object.fromEntries(params.map((p) => [p.name, { ...(p.schema ?? { type: "string" }), ...(p.description && { description: p.description }) }]));
      const required = params.filter((p) => p.required || p.in === "path").map((p) => p.name);
      if (bodySchema) {
        properties.body = bodySchema;
        if ((op.requestBody as Json).required) required.push("body");
      }
      const description = [op.summary, op.description].filter((x) => typeof x === "string").join("\n\n") || `${method.toUpperCase()} ${path}`;
      out.push({
        tool: { name: toolName(method, path, op.operationId), description, inputSchema: { type: "object", properties, ...(required.length && { required }) } },
        method: method.toUpperCase(),
        path,
        params,
        hasBody: Boolean(bodySchema),
      });
    }
  }
  return out;
}

export class OpenApiUpstream implements Upstream {
  private readonly ops: Map<string, Operation>;
  private readonly base: string;

  constructor(private readonly spec: McpServerSpec) {
    const doc = spec.openapi!;
    this.ops = new Map(operationsOf(doc).map((o) => [o.tool.name, o]));
    const declared = ((doc.servers as { url?: string }[] | undefined) ?? [])[0]?.url;
    this.base = (spec.url ?? declared ?? "").replace(/\/$/, "");
  }

  listTools(): Promise<Tool[]> {
    return Promise.resolve([...this.ops.values()].map((o) => o.tool));
  }

  async callTool(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult> {
    const op = this.ops.get(name);
    if (!op) return { isError: true, content: [{ type: "text", text: `no operation ${name}` }] };
    let path = op.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = { ...credentialHeaders(this.spec.headerFiles), ...callerHeaders(), accept: "application/json" };
    for (const p of op.params) {
      const v = args[p.name];
      if (v === undefined) continue;
      const s = typeof v === "string" ? v : JSON.stringify(v);
      if (p.in === "path") path = path.replace(`{${p.name}}`, encodeURIComponent(s));
      else if (p.in === "query") query.append(p.name, s);
      else if (!["authorization", "cookie", "host"].includes(p.name.toLowerCase())) headers[p.name.toLowerCase()] = s;
    }
    if (op.hasBody && args.body !== undefined) headers["content-type"] = "application/json";
    const qs = query.size ? `?${query}` : "";
    const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]);
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}${qs}`, { method: op.method, headers, signal, ...(op.hasBody && args.body !== undefined && { body: JSON.stringify(args.body) }) });
    } catch (err) {
      if (opts.signal.aborted) throw err;
      throw new UpstreamFailure(signal.aborted ? "the service did not answer in time" : `the service could not be reached: ${(err as Error).message}`, signal.aborted ? "timeout" : "upstream_error");
    }
    const text = await res.text();
    if (res.status >= 500) throw new UpstreamFailure(`the service answered ${res.status}`);
    return { isError: !res.ok, content: [{ type: "text", text: res.ok ? text : `HTTP ${res.status}: ${text}` }] };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
