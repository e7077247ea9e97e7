// An upstream reached with the SDK's Client: over Streamable HTTP (the credentials read from their
// files and the caller's x-llmgw-* headers added to every request) or over stdio (./stdio-transport.ts).
// One client per server, connected at first use and again after it fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { callerHeaders, credentialHeaders } from "./caller.ts";
import type { McpServerSpec } from "./spec.ts";
import { StdioTransport, type StdioOptions } from "./stdio-transport.ts";
import { UpstreamFailure, type CallOptions, type Upstream } from "./upstream.ts";

const CLIENT_INFO = { name: "llmgw-mcp-gateway", version: "1" };

/** A fetch that adds, at each request, the credential headers from their files and who calls. */
function fetchWithHeaders(headerFiles: Record<string, string>): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries({ ...credentialHeaders(headerFiles), ...callerHeaders() })) headers.set(k, v);
    return fetch(input, { ...init, headers });
  };
}

/** An SDK error as the gateway counts it: a timeout, or the server failing. */
function failure(err: unknown): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return new UpstreamFailure("the server did not answer in time", "timeout");
  return new UpstreamFailure(err instanceof Error ? err.message : String(err));
}

export class SdkUpstream implements Upstream {
  private client: Promise<Client> | null = null;

  constructor(
    private readonly spec: McpServerSpec,
    private readonly stdio: Omit<StdioOptions, "command" | "env">,
  ) {}

  private transport(): Transport {
    if (this.spec.kind === "stdio") return new StdioTransport({ ...this.stdio, command: this.spec.command, env: this.spec.env });
    return new StreamableHTTPClientTransport(new URL(this.spec.url!), { fetch: fetchWithHeaders(this.spec.headerFiles) });
  }

  private connected(timeoutMs: number): Promise<Client> {
    if (!this.client) {
      const client = new Client(CLIENT_INFO, { capabilities: {} });
      // A closed transport (the stdio process's lifetime ended, the server went away) connects anew next time.
      client.onclose = () => {
        if (this.client === p) this.client = null;
      };
      const p = client.connect(this.transport(), { timeout: timeoutMs }).then(() => client);
      this.client = p;
      p.catch(() => {
        if (this.client === p) this.client = null;
        void client.close().catch(() => undefined);
      });
    }
    return this.client;
  }

  /** Drops the client after a failure: the next call connects again. */
  private reset(): void {
    const c = this.client;
    this.client = null;
    void c?.then((x) => x.close()).catch(() => undefined);
  }

  async listTools(timeoutMs: number): Promise<Tool[]> {
    try {
      const client = await this.connected(timeoutMs);
      const tools: Tool[] = [];
      let cursor: string | undefined;
      // A bound on pages: a server paging forever must not hold the list.
      for (let page = 0; page < 50; page++) {
        const r = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
        tools.push(...r.tools);
        cursor = r.nextCursor;
        if (!cursor) break;
      }
      return tools;
    } catch (err) {
      this.reset();
      throw failure(err);
    }
  }

  async callTool(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult> {
    let client: Client;
    try {
      client = await this.connected(opts.timeoutMs);
    } catch (err) {
      throw failure(err);
    }
    try {
      const r = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
        signal: opts.signal,
        timeout: opts.timeoutMs,
        maxTotalTimeout: opts.timeoutMs,
        ...(opts.onprogress && { onprogress: opts.onprogress }),
      });
      return r as CallToolResult;
    } catch (err) {
      // The caller's cancellation is not the server's failure; the SDK told the server it was cancelled.
      if (opts.signal.aborted) throw err;
      // An error the server answered (an unknown tool, bad arguments) is the caller's to read.
      if (err instanceof McpError && err.code !== ErrorCode.RequestTimeout && err.code !== ErrorCode.ConnectionClosed) throw err;
      this.reset();
      throw failure(err);
    }
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.then((x) => x.close()).catch(() => undefined);
  }
}
