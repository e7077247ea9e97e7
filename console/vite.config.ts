// The console's build: React through @vitejs/plugin-react, bundled by Vite into dist/console, which
// the gateway serves under /console (gateway/http/console-static.ts). Every asset is vendored into
// the build (no CDN) and named by its hash, so the gateway caches them for a year.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/console/",
  plugins: [react()],
  // Beside the build, not in node_modules/.vite: a worktree whose node_modules is a link to another
  // checkout's then keeps its cache (and the lock on it) to itself.
  cacheDir: fileURLToPath(new URL("../dist/.vite", import.meta.url)),
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    // The preload polyfill is not needed by the browsers we support, and would be one more script.
    modulePreload: { polyfill: false },
    // No inline data: URLs for assets: the Content-Security-Policy allows files of this origin.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
});
