// The inference routes without express: a POST to exactly /v1/chat/completions, /v1/completions,
// /v1/embeddings or /v1/messages is read, authenticated and forwarded by plain node; every other
// request (and these paths with a query string or another spelling) goes to the express app,
// which serves the same routes with the same handlers. Express's router and middleware chain cost
// more per request than the rest of the gateway's checks (docs/benchmarks.md).
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { serveMessages } from "./anthropic/routes.ts";
import { requestIdOf, type Caller, type ClientApiDeps } from "./context.ts";
import { authenticate } from "./authenticate.ts";
import { answerError } from "./errors.ts";
import { INFERENCE_ROUTES, serveInference } from "./inference.ts";
import { readJsonBody } from "./json-body.ts";

type Serve = (req: Caller, res: ServerResponse, body: unknown) => Promise<void>;

export function withHotPath(deps: ClientApiDeps, app: RequestListener): RequestListener {
  const routes = new Map<string, Serve>(INFERENCE_ROUTES.map(([path, schema]) => [path, (req, res, body) => serveInference(deps, schema, path, req, res, body)]));
  routes.set("/v1/messages", (req, res, body) => serveMessages(deps, req, res, body));
  return (req: IncomingMessage, res: ServerResponse) => {
    const serve = req.method === "POST" ? routes.get(req.url ?? "") : undefined;
    if (!serve) return app(req, res);
    const caller = req as Caller;
    // Not set on `res` yet: whatever answers writes it with the rest of its headers (proxy.ts relay,
    // the Anthropic responder, answerError), and writeHead without earlier setHeader calls is cheaper.
    caller.requestId = requestIdOf(req);
    // As on the express path: the body is read (and its errors answered) before the key is checked.
    readJsonBody(req, deps.bodyLimitBytes, (err, body, raw) => {
      if (err) return answerError(caller, res, err);
      caller.rawBody = raw;
      authenticate(deps.keys, req.headers)
        .then((key) => {
          caller.key = key;
          return serve(caller, res, body);
        })
        .catch((e: unknown) => answerError(caller, res, e));
    });
  };
}
