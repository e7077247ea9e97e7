// Where a session, or a prompt beginning, was last served: sending it there again finds its KV
// cache (prefix caching) warm. Bounded maps, oldest forgotten first.
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

/** FNV-1a over the first PREFIX_CHARS characters of the prompt's text; 0 when there is none. */
export function prefixHash(body: Record<string, unknown>): number {
  const h = { hash: 0x811c9dc5, left: PREFIX_CHARS };
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const m of messages) {
      if (h.left <= 0) break;
      const content = (m as { content?: unknown }).content;
      if (typeof content === "string") feed(h, content);
      else if (Array.isArray(content)) for (const part of content) feed(h, (part as { text?: unknown }).text);
    }
  } else if (typeof body.prompt === "string") feed(h, body.prompt);
  else if (Array.isArray(body.prompt) && typeof body.prompt[0] === "string") feed(h, body.prompt[0]);
  return h.left === PREFIX_CHARS ? 0 : h.hash >>> 0 || 1;
}

function feed(h: { hash: number; left: number }, s: unknown): void {
  if (typeof s !== "string") return;
  const n = Math.min(s.length, h.left);
  let x = h.hash;
  for (let i = 0; i < n; i++) x = Math.imul(x ^ s.charCodeAt(i), 0x01000193);
  h.hash = x;
  h.left -= n;
}
