// GET /docs/api: Swagger UI over /v1/openapi.json, its assets served by the gateway itself from the
// swagger-ui-dist package (no CDN: gateways often have no way out).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import express from "express";

/** The only files the page needs; nothing else in the folder is served. */
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>llmgw client API</title>
<link rel="stylesheet" href="swagger-ui.css">
<link rel="icon" type="image/png" href="favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="swagger-ui-bundle.js"></script>
<script src="swagger-ui-standalone-preset.js"></script>
<script src="init.js"></script>
</body>
</html>
`;

/** Separate from the page so a Content-Security-Policy without inline scripts still allows it. */
const INIT = (specUrl: string) =>
  `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: "#swagger-ui", deepLinking: true, presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: "StandaloneLayout" });\n`;

/** The installed swagger-ui-dist package's folder, or null. */
export function swaggerUiDir(): string | null {
  try {
    return path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  } catch {
    return null;
  }
}

/** Mount at /docs/api. specUrl: the document, relative to the page or absolute. */
export function swaggerUi(specUrl: string, dir: string | null = swaggerUiDir()): express.Router {
  const r = express.Router({ strict: true });
  const missing = (res: express.Response) =>
    void res.status(503).type("text/plain").send("Swagger UI is not installed on this gateway (the swagger-ui-dist package)\n");
  // The page's relative links need the trailing slash.
  r.get("/", (req, res) => {
    if (!req.originalUrl.split("?")[0]!.endsWith("/")) return void res.redirect(301, `${req.baseUrl}/`);
    if (!dir) return missing(res);
    res.type("html").send(PAGE);
  });
  r.get("/init.js", (_req, res) => void res.type("text/javascript").send(INIT(specUrl)));
  r.get("/:asset", (req, res, next) => {
    const type = ASSETS[String(req.params.asset)];
    if (!type) return next();
    if (!dir) return missing(res);
    res.setHeader("content-type", type);
    res.setHeader("cache-control", "public, max-age=86400");
    fs.createReadStream(path.join(dir, String(req.params.asset)))
      .on("error", () => missing(res))
      .pipe(res);
  });
  return r;
}
