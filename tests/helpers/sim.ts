// The sim engine in-process for the sim's tests (tests/unit/sim*.test.ts): start one on a free
// port, talk to it over real HTTP, read its SSE and its metrics. Each file closes its sims with
// `after(closeSims)`.
import assert from "node:assert/strict";
import { startSim, type SimHandle } from "../../agent/engines/sim/server.ts";
import type { SimSettingsInput } from "../../agent/engines/sim/settings.ts";

const open: SimHandle[] = [];

export async function closeSims(): Promise<void> {
  await Promise.all(open.splice(0).map((h) => h.close()));
}

export async function sim(extra: Partial<SimSettingsInput> = {}): Promise<{ base: string; h: SimHandle }> {
  const h = await startSim({ port: 0, host: "127.0.0.1", model: "sim-chat", ...extra });
  open.push(h);
  return { base: `http://127.0.0.1:${h.port}`, h };
}

export function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export interface ChatChunk {
  id: string;
  object: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/** The `data:` payloads of an SSE body; the last must be [DONE]. */
export function sse(text: string): string[] {
  assert.ok(text.endsWith("\n\n"), "events end with a blank line");
  const events = text.slice(0, -2).split("\n\n");
  for (const e of events) assert.ok(e.startsWith("data: "), `event ${JSON.stringify(e)} is a data line`);
  return events.map((e) => e.slice(6));
}

export async function metric(base: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(base + "/metrics")).text();
  for (const line of text.split("\n")) {
    if (line.startsWith(name + "{") && line.includes(labels)) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  throw new Error(`no ${name} in metrics`);
}

/** Polls `f` until it returns true, or fails after `ms`. */
export async function waitFor(f: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const hello = [{ role: "user", content: "Tell me something about the sea." }];
