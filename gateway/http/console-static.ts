// The web console under /console on the client port: the files Vite built into dist/console
// (console/, scripts/build.sh). Hashed assets are cached for a year; index.html is never cached and
// answers every other path under /console (the console routes on the client side). Every answer
// carries a strict Content-Security-Policy: scripts, styles and calls of this origin only.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Response } from "express";

/** The hash of the <style> element <model-viewer> 4.x renders into its shadow root (see CONSOLE_CSP). */
const MODEL_VIEWER_STYLE = "sha256-PXtZZkJMMyc18o/DN1ZEFOJ2qEGq95IQbVaJFMOXOb0=";

/**
 * Same-origin everything; no inline script, no style element but <model-viewer>'s, no JS eval, no framing. img/connect allow
 * blob: for downloads made in the page (usage CSV) and data: for uPlot's and <model-viewer>'s images.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  // WebAssembly compiles only (no JS eval): three.js's mesh decoder under <model-viewer> is one.
  "script-src 'self' 'wasm-unsafe-eval'",
  // The one <style> element <model-viewer> 4.x puts in its shadow root, by its hash; a new version
  // of it changes the hash, which the 3D page's browser test reports as a CSP error.
  `style-src 'self' '${MODEL_VIEWER_STYLE}'`,
  "img-src 'self' data: blob:",
  "connect-src 'self' blob: data:",
  "font-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** dist/console of this install: beside the compiled gateway (dist/gateway/http) or the sources' dist/. */
export function consoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.resolve(here, "..", "..");
  return path.basename(root) === "dist" ? path.join(root, "console") : path.join(root, "dist", "console");
}

function secure(res: Response): void {
  res.setHeader("content-security-policy", CONSOLE_CSP);
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("x-frame-options", "DENY");
}

/** The router mounted at /console; `dir` is where the build is (consoleDir() unless a test says). */
export function consoleStatic(dir = consoleDir()): express.Router {
  const r = express.Router();
  r.use((req, res, next) => {
    secure(res);
    // /console without its slash: the assets' relative base needs it.
    if (req.originalUrl === "/console") return void res.redirect(301, "/console/");
    next();
  });
  r.use(
    "/assets",
    express.static(path.join(dir, "assets"), {
      index: false,
      immutable: true,
      maxAge: "365d",
    }),
    (req, res) => void res.status(404).json({ error: { message: `no console asset ${req.originalUrl}`, type: "not_found" } }),
  );
  r.get("/{*rest}", (_req, res) => {
    const index = path.join(dir, "index.html");
    if (!fs.existsSync(index)) {
      res.status(503).json({ error: { message: "the console is not built: run `npm run build` (scripts/build.sh builds it into dist/console)", type: "console_not_built" } });
      return;
    }
    res.setHeader("cache-control", "no-cache");
    res.sendFile(index);
  });
  return r;
}
