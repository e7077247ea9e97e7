// The OpenAI inference routes (chat, completions, embeddings; rerank in vLLM's shape) once the caller is authenticated:
// check the body against the route's schema, then forward. Served by the hot path (./hot-path.ts).
import type { ServerResponse } from "node:http";
import type { z } from "zod";
import type { Caller, ClientApiDeps } from "./context.ts";
import { ApiError } from "../errors.ts";
import { forward } from "./forward.ts";
import { chatCompletionRequest, completionRequest, embeddingRequest, firstIssue, rerankRequest } from "./schemas.ts";

type InferenceSchema = z.ZodType<{ model: string; stream?: boolean | undefined }>;

/** Each inference route and the schema its body must meet. */
export const INFERENCE_ROUTES: ReadonlyArray<readonly [path: string, schema: InferenceSchema]> = [
  ["/v1/chat/completions", chatCompletionRequest],
  ["/v1/completions", completionRequest],
  ["/v1/embeddings", embeddingRequest],
  ["/v1/rerank", rerankRequest],
];

/** Throws an ApiError when the request cannot be served. */
export async function serveInference(deps: ClientApiDeps, schema: InferenceSchema, path: string, req: Caller, res: ServerResponse, raw: unknown): Promise<void> {
  const started = performance.now();
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const { message, param } = firstIssue(parsed.error);
    throw new ApiError("invalid_request", message, { param });
  }
  const body = parsed.data as Record<string, unknown> & { model: string; stream?: boolean; stream_options?: { include_usage?: boolean } | null };
  await forward(deps, req, res, body.model, {
    path,
    body,
    raw: req.rawBody,
    stream: body.stream === true,
    clientWantsUsage: body.stream_options?.include_usage === true,
    started,
  });
}
