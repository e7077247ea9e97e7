// FNV-1a over the first characters of a request's prompt text: a chat's messages (string or
// text-part contents, in order) or a completion's first prompt. The gateway's prefix affinity and
// the sim's model of an engine's prefix cache both key on it.

/**
 * The hash (never 0) of the prompt's first `chars` characters, or 0 when there is nothing to key on:
 * no text at all, or (with `whole`) fewer than `chars` characters.
 */
export function promptStartHash(body: Record<string, unknown>, chars: number, whole: boolean): number {
  const h = { hash: 0x811c9dc5, left: chars };
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const m of messages) {
      if (h.left <= 0) break;
      const content = (m as { content?: unknown }).content;
      if (typeof content === "string") feed(h, content);
      else if (Array.isArray(content)) for (const part of content) feed(h, (part as { text?: unknown } | null)?.text);
    }
  } else if (typeof body.prompt === "string") feed(h, body.prompt);
  else if (Array.isArray(body.prompt) && typeof body.prompt[0] === "string") feed(h, body.prompt[0]);
  const hashed = chars - h.left;
  if (hashed === 0 || (whole && h.left > 0)) return 0;
  return h.hash >>> 0 || 1;
}

function feed(h: { hash: number; left: number }, s: unknown): void {
  if (typeof s !== "string") return;
  const n = Math.min(s.length, h.left);
  let x = h.hash;
  for (let i = 0; i < n; i++) x = Math.imul(x ^ s.charCodeAt(i), 0x01000193);
  h.hash = x;
  h.left -= n;
}
