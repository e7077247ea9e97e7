// One short chat asked of a model this gateway serves, for a stage of its own (the guard's judge):
// no key, no limits, no usage row; the `attempt`-th replica (so a hedged second ask goes to another
// one when the model has several). The answer's text, or an error.
import { ApiError } from "../errors.ts";
import { outsidePath } from "./providers.ts";
import type { EndpointRegistry } from "./registry.ts";

export type AskModel = (model: string, messages: { role: string; content: string }[], signal: AbortSignal, attempt: number) => Promise<string>;

export function askModel(registry: EndpointRegistry): AskModel {
  return async (model, messages, signal, attempt) => {
    const endpoints = registry.endpoints(model);
    if (endpoints.length === 0) throw new ApiError("unavailable", `model '${model}' is not being served right now`, { code: "model_not_ready" });
    const e = endpoints[attempt % endpoints.length]!;
    const o = e.outside;
    const body = JSON.stringify({ model: o?.model ?? model, messages, max_tokens: 16, temperature: 0, stream: false });
    const r = await e.pool.request({
      path: o ? outsidePath(o, "/v1/chat/completions") : "/v1/chat/completions",
      method: "POST",
      headers: { "content-type": "application/json", authorization: o ? o.authorization : e.engineAuth },
      body,
      signal,
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`the model answered ${r.statusCode}`);
    const content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== "string") throw new Error("the model's answer has no text");
    return content;
  };
}
