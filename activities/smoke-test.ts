// A replica's one real request before the router may send it traffic, with the replica's own key.
// An engine serving a model of one task refuses the other tasks' routes with a 4xx (vLLM answers a
// Whisper model's chat, or an embedding model's, with 404/400 "does not support"), so the probes
// are tried in turn and the first the engine takes proves it (whisper.cpp's server answers 404 to
// all but the transcription). ComfyUI speaks no OpenAI API: its queue answering through its gate
// is its proof.
import { heartbeat } from "@temporalio/activity";
import type { ReplicaRef } from "../workflows/model-types.ts";
import type { ActivityDeps } from "./deps.ts";
import { engineAuth } from "../common/engine-key.ts";
import { TRANSCRIPTION_PATH } from "../agent/engines/whisper-server.ts";
import { silentWav } from "../common/wav.ts";

interface Probe {
  name: string;
  send(url: string, model: string, headers: Record<string, string>): Promise<Response>;
  /** Whether a 200's body is the route's answer, not some other page. */
  answered(body: unknown): boolean;
}

const json = (path: string, body: (model: string) => unknown) => (url: string, model: string, headers: Record<string, string>) =>
  fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body(model)), signal: AbortSignal.timeout(60_000) });

const chat: Probe = {
  name: "chat",
  send: json("/v1/chat/completions", (model) => ({ model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 })),
  answered: (b) => Array.isArray((b as { choices?: unknown } | null)?.choices),
};
/** A base model without a chat template: vLLM refuses its chat with a 400 but completes text. */
const completions: Probe = {
  name: "completions",
  send: json("/v1/completions", (model) => ({ model, prompt: "ping", max_tokens: 1 })),
  answered: (b) => Array.isArray((b as { choices?: unknown } | null)?.choices),
};
const embeddings: Probe = {
  name: "embeddings",
  send: json("/v1/embeddings", (model) => ({ model, input: "ping" })),
  answered: (b) => Array.isArray((b as { data?: unknown } | null)?.data),
};
const transcription: Probe = {
  name: "transcription",
  send: (url, model, headers) => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(silentWav(0.5))], { type: "audio/wav" }), "smoke.wav");
    form.append("model", model);
    form.append("response_format", "json");
    return fetch(`${url}${TRANSCRIPTION_PATH}`, { method: "POST", headers, body: form, signal: AbortSignal.timeout(60_000) });
  },
  answered: (b) => typeof (b as { text?: unknown } | null)?.text === "string",
};

/** The probes, in the order an engine is asked. */
const PROBES = [chat, completions, embeddings, transcription];

/** "Not this model's task": a 4xx that is neither the key refused nor the engine busy. */
const refusesTask = (status: number) => status >= 400 && status < 500 && ![401, 403, 408, 429].includes(status);

export async function smokeTest(deps: ActivityDeps, input: { replica: ReplicaRef }): Promise<void> {
  const headers = engineAuth(deps.clusterToken, input.replica.id);
  const stats = await fetch(`${input.replica.url}/system_stats`, { headers, signal: AbortSignal.timeout(20_000) }).catch(() => null);
  if (stats?.ok && (await fetch(`${input.replica.url}/queue`, { headers, signal: AbortSignal.timeout(20_000) })).ok) return;
  // A first request can take longer than the activity's heartbeat timeout (a model warming up).
  const beat = setInterval(() => heartbeat({ state: "smoke test" }), 1000);
  const refused: string[] = [];
  try {
    for (const probe of PROBES) {
      const res = await probe.send(input.replica.url, input.replica.model, headers);
      const body = (await res.json().catch(() => null)) as unknown;
      if (res.ok && probe.answered(body)) return;
      refused.push(`${probe.name}: HTTP ${res.status}`);
      if (!refusesTask(res.status)) break;
    }
  } finally {
    clearInterval(beat);
  }
  throw new Error(`smoke test of ${input.replica.id} failed: ${refused.join(", ")}`);
}
