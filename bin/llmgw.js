#!/usr/bin/env node
// The one executable. It runs the compiled build (dist/, made by `npm run build`) when that is
// there and up to date, else the TypeScript sources through tsx's loader (bin/dist.js says which).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runsDist } from "./dist.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
if (runsDist(root)) {
  await import("../dist/cli.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../cli.ts");
}
