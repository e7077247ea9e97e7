// What the gateway needs of a tool server, whatever reaches it: its tools, a call, closing it.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

export interface CallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  onprogress?: (p: Progress) => void;
}

export interface Upstream {
  listTools(timeoutMs: number): Promise<Tool[]>;
  callTool(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The server could not be reached or did not answer as MCP says: counts against its breaker. */
export class UpstreamFailure extends Error {
  constructor(
    message: string,
    readonly outcome: "upstream_error" | "timeout" = "upstream_error",
  ) {
    super(message);
  }
}
