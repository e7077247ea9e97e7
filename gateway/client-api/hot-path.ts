// The inference routes, served by plain node and only here: a POST to /v1/chat/completions,
// /v1/completions, /v1/embeddings, /v1/rerank, /v1/messages or /v1/responses, whatever its query string and spelled as express
// would match it (any case, a trailing slash), is read, authenticated and forwarded without express.
// Every other request goes to the express app (./app.ts): the other routes, the API's description,
// and the 405 with Allow that a method these paths do not take gets. Express's router and
// middleware chain cost more per request than the rest of the gateway's checks (docs/benchmarks.md).
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { serveMessages } from "./anthropic/routes.ts";
import { serveResponses } from "./responses/routes.ts";
import { authenticate } from "./authenticate.ts";
import { requestIdOf, type Caller, type ClientApiDeps } from "./context.ts";
import { answerError } from "./errors.ts";
import { INFERENCE_ROUTES, serveInference } from "./inference.ts";
import { readJsonBody } from "./json-body.ts";

type Serve = (req: Caller, res: ServerResponse, body: unknown) => Promise<void>;

/** Every path the hot path serves (POST only), as the API's document names it. */
export const HOT_PATH_ROUTES: readonly string[] = [...INFERENCE_ROUTES.map(([path]) => path), "/v1/messages", "/v1/responses"];

/** A request URL's path as express matches routes: no query string, no trailing slash, any case. */
export function routePathOf(url: string): string {
  const q = url.indexOf("?");
  let path = q < 0 ? url : url.slice(0, q);
  if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return path.toLowerCase();
}

export function withHotPath(deps: ClientApiDeps, app: RequestListener): RequestListener {
  const routes = new Map<string, Serve>(INFERENCE_ROUTES.map(([path, schema]) => [path, (req, res, body) => serveInference(deps, schema, path, req, res, body)]));
  routes.set("/v1/messages", (req, res, body) => serveMessages(deps, req, res, body));
  routes.set("/v1/responses", (req, res, body) => serveResponses(deps, req, res, body));
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "";
    // The URL as documented first: no string is made for the usual request.
    const serve = req.method === "POST" ? (routes.get(url) ?? routes.get(routePathOf(url))) : undefined;
    if (!serve) return app(req, res);
    const caller = req as Caller;
    // Not set on `res` yet: whatever answers writes it with the rest of its headers (proxy.ts relay,
    // the Anthropic responder, answerError), and writeHead without earlier setHeader calls is cheaper.
    caller.requestId = requestIdOf(req);
    // The body is read (and its errors answered) before the key is checked, as express's routes do.
    readJsonBody(req, deps.bodyLimitBytes, (err, body, raw) => {
      if (err) return answerError(caller, res, err);
      caller.rawBody = raw;
      authenticate(deps.keys, req.headers, deps.batchKeys)
        .then((key) => {
          caller.key = key;
          return serve(caller, res, body);
        })
        .catch((e: unknown) => answerError(caller, res, e));
    });
  };
}
