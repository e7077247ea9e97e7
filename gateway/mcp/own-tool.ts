// llmgw's own tools, beside the company's servers on /mcp: each a name (`<server>.<tool>`, the
// server being `llmgw` or `llmgw-admin`), a zod schema for its arguments (its JSON schema is what
// tools/list shows) and what it does. Who may see one is decided by its server (gateway/mcp/own.ts).
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpCaller } from "./caller-key.ts";
import type { Progress } from "./upstream.ts";

export interface OwnCallContext {
  caller: McpCaller;
  signal: AbortSignal;
  onprogress?: (p: Progress) => void;
}

export interface OwnTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  run(args: z.output<S>, ctx: OwnCallContext): Promise<CallToolResult>;
}

export function ownTool<S extends z.ZodType>(t: OwnTool<S>): OwnTool {
  return t as unknown as OwnTool;
}

/** The tool as tools/list shows it. */
export function listed(t: OwnTool): Tool {
  const schema = z.toJSONSchema(t.input, { io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: t.name, description: t.description, inputSchema: { ...schema, type: "object" } as Tool["inputSchema"] };
}

/** A JSON answer: its text for every client, structured for those that read it. */
export function jsonResult(value: unknown): CallToolResult {
  const structured = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  return { content: [{ type: "text", text: JSON.stringify(structured, null, 1) }], structuredContent: Array.isArray(structured) ? { items: structured } : structured };
}

export const toolError = (text: string, meta?: Record<string, unknown>): CallToolResult => ({ isError: true, content: [{ type: "text", text }], ...(meta && { _meta: meta }) });
