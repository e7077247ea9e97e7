// Anthropic's Messages API on the client API: /v1/messages (translated to the engine's OpenAI chat
// API and back), served by the hot path (../hot-path.ts), and /v1/messages/count_tokens, an express
// route. Errors answer in Anthropic's shape on these paths (../errors.ts).
import type { ServerResponse } from "node:http";
import express, { type NextFunction, type Response } from "express";
import type { Authed, Caller, ClientApiDeps } from "../context.ts";
import { ApiError } from "../../errors.ts";
import { forward } from "../forward.ts";
import { firstIssue } from "../schemas.ts";
import { countTokens } from "./count-tokens.ts";
import { toOpenAIChat } from "./request.ts";
import { anthropicResponder } from "./respond.ts";
import { countTokensRequest, messagesRequest } from "./schemas.ts";

/** POST /v1/messages once the caller is authenticated; throws an ApiError when it cannot be served. */
export async function serveMessages(deps: ClientApiDeps, req: Caller, res: ServerResponse, raw: unknown): Promise<void> {
  const started = performance.now();
  const parsed = messagesRequest.safeParse(raw);
  if (!parsed.success) throw new ApiError("invalid_request", firstIssue(parsed.error).message);
  const body = parsed.data;
  await forward(
    deps,
    req,
    res,
    body.model,
    {
      path: "/v1/chat/completions",
      body: toOpenAIChat(body),
      stream: body.stream === true,
      clientWantsUsage: false,
      started,
      respond: anthropicResponder({ model: body.model, thinking: body.thinking?.type === "enabled", stopSequences: body.stop_sequences ?? [] }),
    },
    "/v1/messages",
  );
}

export function anthropicRoutes(deps: ClientApiDeps): express.Router {
  const r = express.Router();

  r.post("/messages/count_tokens", (req: Authed, res: Response, next: NextFunction) => {
    const parsed = countTokensRequest.safeParse(req.body);
    if (!parsed.success) return next(new ApiError("invalid_request", firstIssue(parsed.error).message));
    countTokens(deps, req, res, parsed.data).catch(next);
  });

  return r;
}
