// OpenAI's Responses API on the client API: POST /v1/responses (translated to the engine's chat
// API and back, served by the hot path, ../hot-path.ts, through the same pipeline as chat), and the
// stored responses' routes (express): GET and DELETE /v1/responses/{id}, GET .../input_items.
import type { ServerResponse } from "node:http";
import express, { type NextFunction, type Response } from "express";
import type { Authed, Caller, ClientApiDeps } from "../context.ts";
import { log } from "../../../common/logging.ts";
import { ApiError } from "../../errors.ts";
import { forward } from "../forward.ts";
import { firstIssue } from "../schemas.ts";
import { inputItemList, inputMessages, toOpenAIChat, type OpenAIMessage } from "./request.ts";
import { responsesResponder } from "./respond.ts";
import { answerMessages, responseContext } from "./response.ts";
import { inputItemsQuery, responsesRequest } from "./schemas.ts";

const notFound = (id: string) => new ApiError("not_found", `No response found with id '${id}'.`, { code: "response_not_found" });

/** POST /v1/responses once the caller is authenticated; throws an ApiError when it cannot be served. */
export async function serveResponses(deps: ClientApiDeps, req: Caller, res: ServerResponse, raw: unknown): Promise<void> {
  const started = performance.now();
  const parsed = responsesRequest.safeParse(raw);
  if (!parsed.success) {
    const { message, param } = firstIssue(parsed.error);
    throw new ApiError("invalid_request", message, { param });
  }
  const body = parsed.data;
  const projectId = req.key!.projectId;
  const store = deps.responses ?? null;
  const noStore = store === null || (await store.noStore(projectId));
  let earlier: OpenAIMessage[] = [];
  if (body.previous_response_id) {
    if (noStore) {
      const why = store === null ? "this gateway keeps no responses" : "this project keeps no responses (no_store)";
      throw new ApiError("invalid_request", `previous_response_id cannot be used: ${why}; send the whole conversation in input instead`, { param: "previous_response_id", code: "previous_response_not_stored" });
    }
    const prev = await store!.get(projectId, body.previous_response_id);
    if (!prev) throw new ApiError("not_found", `Previous response with id '${body.previous_response_id}' not found.`, { param: "previous_response_id", code: "previous_response_not_found" });
    earlier = prev.conversation;
  }
  const ctx = responseContext(body, !noStore && body.store !== false);
  await forward(
    deps,
    req,
    res,
    body.model,
    {
      path: "/v1/chat/completions",
      body: toOpenAIChat(body, earlier),
      stream: body.stream === true,
      clientWantsUsage: false,
      started,
      respond: responsesResponder(ctx, async (response, output) => {
        if (!ctx.store) return;
        const conversation = [...earlier, ...inputMessages(body.input), ...answerMessages(output)];
        try {
          await store!.save(projectId, ctx.id, { response, inputItems: inputItemList(body.input), conversation });
        } catch (err) {
          // The answer is made and paid for: the client gets it; only a later retrieve will miss it.
          log.warn("a response could not be stored", { requestId: req.requestId, error: (err as Error).message });
        }
      }),
    },
    "/v1/responses",
  );
}


export function responsesRoutes(deps: ClientApiDeps): express.Router {
  const r = express.Router();
  const find = async (req: Authed) => {
    const id = String(req.params.id);
    const row = deps.responses ? await deps.responses.get(req.key!.projectId, id) : null;
    if (!row) throw notFound(id);
    return row;
  };

  r.get("/responses/:id", (req: Authed, res: Response, next: NextFunction) => {
    find(req).then((row) => void res.json(row.response), next);
  });

  r.delete("/responses/:id", (req: Authed, res: Response, next: NextFunction) => {
    const id = String(req.params.id);
    (deps.responses?.delete(req.key!.projectId, id) ?? Promise.resolve(false)).then((deleted) => {
      if (!deleted) return next(notFound(id));
      res.json({ id, object: "response", deleted: true });
    }, next);
  });

  r.get("/responses/:id/input_items", (req: Authed, res: Response, next: NextFunction) => {
    const q = inputItemsQuery.safeParse(req.query);
    if (!q.success) {
      const { message, param } = firstIssue(q.error);
      return next(new ApiError("invalid_request", message, { param }));
    }
    find(req).then((row) => {
      let items = q.data.order === "desc" ? [...row.inputItems].reverse() : row.inputItems;
      if (q.data.after) items = items.slice(items.findIndex((i) => i.id === q.data.after) + 1);
      const data = items.slice(0, q.data.limit);
      res.json({ object: "list", data, first_id: (data[0]?.id as string | undefined) ?? null, last_id: (data[data.length - 1]?.id as string | undefined) ?? null, has_more: items.length > data.length });
    }, next);
  });

  return r;
}
