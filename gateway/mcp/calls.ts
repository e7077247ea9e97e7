// Listing and calling tools for one caller: the tools of every server, named `<server>.<tool>` and
// filtered by the key's grants; a call checked against the grant, the server's breaker and rate,
// bounded in size and time, forwarded with who calls, recorded in the audit log and the metrics.
import type { Redis } from "ioredis";
import { ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { PrismaClient } from "../../common/db.ts";
import { recordCall } from "./audit.ts";
import type { ServerBreakers } from "./breaker.ts";
import { asCaller } from "./caller.ts";
import type { McpCaller } from "./caller-key.ts";
import type { McpCatalog } from "./catalog.ts";
import type { GuardService } from "../guard/service.ts";
import { guardAnswer, guardArgs } from "./guarded.ts";
import { grantsOf, toolGranted } from "./grants.ts";
import type { McpMetrics, Outcome } from "./metrics.ts";
import { takeCall } from "./rate.ts";
import { isOwnServer, type OwnTools } from "./own.ts";
import { UpstreamFailure, type Progress } from "./upstream.ts";

export interface McpDeps {
  db: PrismaClient;
  redis: Redis;
  catalog: McpCatalog;
  breakers: ServerBreakers;
  metrics: McpMetrics;
  guard: GuardService | null;
  own: OwnTools;
  /** The most a call's arguments and its answer may be, as JSON. */
  maxArgsBytes: number;
  maxAnswerBytes: number;
}

export interface CallContext {
  signal: AbortSignal;
  onprogress?: (p: Progress) => void;
}

const toolError = (text: string, meta?: Record<string, unknown>): CallToolResult => ({ isError: true, content: [{ type: "text", text }], ...(meta && { _meta: meta }) });

export async function listTools(deps: McpDeps, key: McpCaller): Promise<Tool[]> {
  const grants = await grantsOf(deps.db, key);
  const own = await deps.own.list(key, grants);
  if (grants.length === 0) return own;
  const servers = await deps.catalog.servers();
  const lists = await Promise.all(servers.filter((h) => grants.some((g) => g === "*" || g.startsWith(`${h.spec.name}.`))).map(async (h) => (await deps.catalog.tools(h)).map((t) => ({ ...t, name: `${h.spec.name}.${t.name}` }))));
  return [...own, ...lists.flat().filter((t) => toolGranted(grants, t.name))];
}

export async function callTool(deps: McpDeps, key: McpCaller, name: string, given: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
  let args = given;
  const started = performance.now();
  const argsJson = JSON.stringify(args);
  const dot = name.indexOf(".");
  const [server, tool] = dot > 0 ? [name.slice(0, dot), name.slice(dot + 1)] : ["", name];
  const done = (outcome: Outcome) => {
    const ms = performance.now() - started;
    deps.metrics.observe(server || "(none)", name, outcome, ms / 1000);
    recordCall(deps.db, { key, tool: name, argsJson, outcome, durationMs: ms });
  };
  // Not granted and not there read alike: a key learns nothing of tools it may not use.
  const grants = await grantsOf(deps.db, key);
  if (isOwnServer(server)) return ownCall(deps, key, grants, name, args, ctx, done);
  const h = server && toolGranted(grants, name) ? await deps.catalog.server(server) : undefined;
  if (!h) {
    done("denied");
    throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
  }
  if (Buffer.byteLength(argsJson) > deps.maxArgsBytes) {
    done("too_large");
    return toolError(`the arguments are larger than ${deps.maxArgsBytes} bytes`);
  }
  const outMs = await deps.breakers.outFor(server);
  if (outMs > 0) {
    done("breaker_open");
    const retryAfterSeconds = Math.ceil(outMs / 1000);
    return toolError(`server ${server} is out after failing repeatedly; try again in ${retryAfterSeconds} s`, { "llmgw/retryAfterSeconds": retryAfterSeconds });
  }
  if (deps.guard) {
    const g = guardArgs(deps.guard, key, name, args);
    if (!g.ok) {
      done("blocked");
      return toolError(`the arguments were ${g.message}`);
    }
    args = g.value;
  }
  const rate = await takeCall(deps.redis, server, key.id, h.spec.ratePerMin);
  if (!rate.allowed) {
    done("rate_limited");
    return toolError(`rate limit reached: ${h.spec.ratePerMin} calls a minute to ${server} per key; try again in ${rate.retryAfterS} s`, { "llmgw/retryAfterSeconds": rate.retryAfterS });
  }
  let result: CallToolResult;
  try {
    result = await asCaller({ keyId: key.id, projectId: key.projectId, personId: key.personId ?? null }, () =>
      h.upstream.callTool(tool, args, { signal: ctx.signal, timeoutMs: h.spec.timeoutMs, ...(ctx.onprogress && { onprogress: ctx.onprogress }) }),
    );
  } catch (err) {
    if (ctx.signal.aborted) {
      done("cancelled");
      throw err;
    }
    if (err instanceof UpstreamFailure) {
      await deps.breakers.failed(server, err.message);
      done(err.outcome);
      return toolError(`${server} failed: ${err.outcome === "timeout" ? `no answer within ${h.spec.timeoutMs} ms` : err.message}`);
    }
    // The server answered with an error of its own (bad arguments): it is up; the caller reads it.
    await deps.breakers.succeeded(server);
    done("tool_error");
    if (err instanceof McpError) throw new McpError(err.code, `${server}: ${err.message.replace(/^MCP error -?\d+: /, "")}`, err.data);
    throw err;
  }
  await deps.breakers.succeeded(server);
  if (Buffer.byteLength(JSON.stringify(result)) > deps.maxAnswerBytes) {
    done("too_large");
    return toolError(`${name}'s answer is larger than ${deps.maxAnswerBytes} bytes; it was withheld`);
  }
  if (deps.guard) {
    const g = guardAnswer(deps.guard, key, name, result);
    if (!g.ok) {
      done("blocked");
      return toolError(`${name}'s answer was ${g.message}`);
    }
    result = g.value;
  }
  done(result.isError ? "tool_error" : "ok");
  return result;
}

/** One of llmgw's own tools, audited and counted as any call is. */
async function ownCall(deps: McpDeps, key: McpCaller, grants: string[], name: string, args: Record<string, unknown>, ctx: CallContext, done: (o: Outcome) => void): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    result = await deps.own.call(key, grants, name, args, ctx);
  } catch (err) {
    // Not granted (or not there), arguments refused, or the platform failed.
    const refused = err instanceof McpError && err.code === ErrorCode.InvalidParams;
    done(ctx.signal.aborted ? "cancelled" : refused && err.message.includes("unknown tool: ") ? "denied" : refused ? "tool_error" : "upstream_error");
    throw err;
  }
  done(result.isError ? "tool_error" : "ok");
  return result;
}
