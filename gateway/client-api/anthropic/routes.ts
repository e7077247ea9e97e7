// Anthropic's Messages API on the client API: /v1/messages (translated to the engine's OpenAI chat
// API and back) and /v1/messages/count_tokens. Errors reach the app's handler, which answers in
// Anthropic's shape on these paths.
import express, { type NextFunction, type Response } from "express";
import type { ClientApiDeps } from "../app.ts";
import { ApiError } from "../errors.ts";
import { forward, type Authed } from "../forward.ts";
import { firstIssue } from "../schemas.ts";
import { estimateInputTokens } from "./count-tokens.ts";
import { toOpenAIChat, toOpenAIPrompt } from "./request.ts";
import { anthropicResponder } from "./respond.ts";
import { countTokensRequest, messagesRequest } from "./schemas.ts";

export function anthropicRoutes(deps: ClientApiDeps): express.Router {
  const r = express.Router();

  r.post("/messages", async (req: Authed, res: Response, next: NextFunction) => {
    const started = performance.now();
    const parsed = messagesRequest.safeParse(req.body);
    if (!parsed.success) return next(new ApiError("invalid_request", firstIssue(parsed.error).message));
    const body = parsed.data;
    const stream = body.stream === true;
    try {
      await forward(
        deps,
        req,
        res,
        body.model,
        {
          path: "/v1/chat/completions",
        body: toOpenAIChat(body),
        stream,
        clientWantsUsage: false,
        started,
          respond: anthropicResponder({ model: body.model, thinking: body.thinking?.type === "enabled", stopSequences: body.stop_sequences ?? [] }),
        },
        "/v1/messages",
      );
    } catch (err) {
      next(err);
    }
  });

  r.post("/messages/count_tokens", (req: Authed, res: Response, next: NextFunction) => {
    const parsed = countTokensRequest.safeParse(req.body);
    if (!parsed.success) return next(new ApiError("invalid_request", firstIssue(parsed.error).message));
    res.json({ input_tokens: estimateInputTokens(toOpenAIPrompt(parsed.data).messages) });
  });

  return r;
}
