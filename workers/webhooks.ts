// The webhooks notifications go to: a file of one per line, `json URL` or `slack URL` (blank lines
// and `#` comments skipped), read again for every notification so an edit needs no restart. A
// webhook's URL is a secret (its path often is the credential), so it is named by a ref, its host
// and a hash prefix, in logs, errors, job records and the admin API. `json` bodies are signed with
// HMAC-SHA256 under the notify secret: `x-llmgw-signature: sha256=HEX` over `TIMESTAMP.BODY`, with
// `x-llmgw-timestamp` (ms), so a receiver can check both who sent it and that it is fresh.
import { createHmac } from "node:crypto";
import fs from "node:fs";
import { z } from "zod";
import { sha256Hex } from "../common/secrets.ts";
import type { Delivery, Notification } from "../common/notify-event.ts";

export interface Webhook {
  format: "json" | "slack";
  url: string;
  ref: string;
}

/** A webhook's answer is awaited this long. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

const line = z.tuple([z.enum(["json", "slack"]), z.url({ protocol: /^https?$/ })]);

/** Parses the file's text; an error names the line, never the text on it. */
export function parseWebhooks(text: string): Webhook[] {
  const out: Webhook[] = [];
  text.split("\n").forEach((raw, i) => {
    const s = raw.trim();
    if (!s || s.startsWith("#")) return;
    const parsed = line.safeParse(s.split(/\s+/));
    if (!parsed.success) throw new Error(`webhooks file line ${i + 1}: expected \`json URL\` or \`slack URL\` (http or https)`);
    const [format, url] = parsed.data;
    out.push({ format, url, ref: webhookRef(url) });
  });
  return out;
}

export function readWebhooks(file: string | undefined): Webhook[] {
  return file ? parseWebhooks(fs.readFileSync(file, "utf8")) : [];
}

/** `host/…hash8`: enough to tell webhooks apart, nothing to call one with. */
export function webhookRef(url: string): string {
  return `${new URL(url).host}/…${sha256Hex(url).slice(0, 8)}`;
}

/** The request for one webhook: Slack's `{text}`, or the notification itself, signed. */
export function webhookRequest(w: Webhook, n: Notification & { id: string }, secret: string, now = Date.now()): { body: string; headers: Record<string, string> } {
  if (w.format === "slack") return { body: JSON.stringify({ text: `[llmgw] ${n.summary}` }), headers: { "content-type": "application/json" } };
  const body = JSON.stringify(n);
  const timestamp = String(now);
  const signature = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return { body, headers: { "content-type": "application/json", "x-llmgw-timestamp": timestamp, "x-llmgw-signature": `sha256=${signature}` } };
}

/** Posts it; any 2xx is taken. The error says what happened in words of ours: a fetch error can quote the URL. */
export async function deliver(w: Webhook, n: Notification & { id: string }, secret: string): Promise<Delivery> {
  const { body, headers } = webhookRequest(w, n, secret);
  try {
    const res = await fetch(w.url, { method: "POST", body, headers, signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS), redirect: "manual" });
    await res.body?.cancel();
    return res.ok ? { webhook: w.ref, ok: true, status: res.status } : { webhook: w.ref, ok: false, status: res.status, error: `answered ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === "TimeoutError" ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : `could not be reached${e.cause?.code ? ` (${e.cause.code})` : ""}`;
    return { webhook: w.ref, ok: false, status: null, error: why };
  }
}
