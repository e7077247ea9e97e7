// Who calls a tool, told to the upstream server in x-llmgw-* headers. The upstream MCP client is
// shared by every caller of a server, so the caller rides along in an AsyncLocalStorage: the
// client's fetch runs inside the call and reads it there.
import { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";

export interface CallerId {
  keyId: string;
  projectId: string;
  personId: string | null;
}

const current = new AsyncLocalStorage<CallerId>();

export function asCaller<T>(caller: CallerId, fn: () => Promise<T>): Promise<T> {
  return current.run(caller, fn);
}

export function callerHeaders(): Record<string, string> {
  const c = current.getStore();
  if (!c) return {};
  return { "x-llmgw-key-id": c.keyId, "x-llmgw-project": c.projectId, ...(c.personId && { "x-llmgw-person": c.personId }) };
}

/**
 * The credential headers, read from their files at each call (a rotated token is used at once) and
 * never kept. A file that cannot be read fails the call naming the header, never the path's content.
 */
export function credentialHeaders(files: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, file] of Object.entries(files)) {
    try {
      out[name] = fs.readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new Error(`the ${name} header's file could not be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
  }
  return out;
}
