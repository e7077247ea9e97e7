// One text embedded by an embedding model this gateway serves, for a stage of its own (the similar
// answer cache): through the registry's replicas or outside keys, in turn; no key, limits or usage
// row. The vector, or an error (no replica, a refusal, a timeout).
import { ApiError } from "../errors.ts";
import { outsidePath } from "./providers.ts";
import type { EndpointRegistry } from "./registry.ts";

export type EmbedText = (model: string, text: string, signal: AbortSignal) => Promise<number[]>;

export function embedText(registry: EndpointRegistry): EmbedText {
  let turn = 0;
  return async (model, text, signal) => {
    const endpoints = registry.endpoints(model);
    if (endpoints.length === 0) throw new ApiError("unavailable", `model '${model}' is not being served right now`, { code: "model_not_ready" });
    const e = endpoints[turn++ % endpoints.length]!;
    const o = e.outside;
    const r = await e.pool.request({
      path: o ? outsidePath(o, "/v1/embeddings") : "/v1/embeddings",
      method: "POST",
      headers: { "content-type": "application/json", authorization: o ? o.authorization : e.engineAuth },
      body: JSON.stringify({ model: o?.model ?? model, input: text }),
      signal,
    });
    const body = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`the embedding model answered ${r.statusCode}`);
    const v = (JSON.parse(body) as { data?: { embedding?: unknown }[] }).data?.[0]?.embedding;
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === "number" && Number.isFinite(x))) throw new Error("the embedding model's answer has no vector");
    return v as number[];
  };
}
