/**
 * Builds the web UI into `dist/web`, which the gateway serves at `/`. Everything is bundled:
 * the UI loads nothing from a CDN.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/",
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
  },
});
