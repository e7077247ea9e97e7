// Where a session, or a prompt beginning, was last served: sending it there again finds its KV
// cache (prefix caching) warm. Bounded maps, oldest forgotten first.
import { promptStartHash } from "../../common/prompt-start-hash.ts";

export const PREFIX_CHARS = 256;
const MAX_ENTRIES = 50_000;

export class Affinity {
  private sessions = new Map<string, string>();
  private prefixes = new Map<number, string>();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  session(key: string): string | undefined {
    return this.sessions.get(key);
  }

  prefix(hash: number): string | undefined {
    return this.prefixes.get(hash);
  }

  served(session: string | null, prefix: number, endpointId: string): void {
    if (session !== null) remember(this.sessions, session, endpointId, this.maxEntries);
    if (prefix !== 0) remember(this.prefixes, prefix, endpointId, this.maxEntries);
  }
}

function remember<K>(m: Map<K, string>, k: K, v: string, max: number): void {
  // Delete then set moves the key to the end: a Map iterates in insertion order, oldest first.
  m.delete(k);
  m.set(k, v);
  if (m.size > max) m.delete(m.keys().next().value as K);
}

/** The affinity key of a request's prompt: its first PREFIX_CHARS characters' hash, 0 when it has no text. */
export function prefixHash(body: Record<string, unknown>): number {
  return promptStartHash(body, PREFIX_CHARS, false);
}
