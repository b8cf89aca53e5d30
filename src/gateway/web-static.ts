/**
 * Serves the built web UI (`dist/web`) — public files, no auth, no directory listing, nothing
 * outside the root. Without a build, `/` says how to make one.
 */
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import type { Hono } from "hono";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".map": "application/json",
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>nanobot</title>
<p>The web UI is not built. Run <code>npm run build:web</code> (or <code>npm run build</code>) and restart the gateway.
The API is available at <code>/v1</code>.</p>`;

/** The file under `root` a URL path names, or undefined when it would escape the root. */
function resolveInside(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  const file = normalize(join(root, decoded === "/" ? "index.html" : decoded));
  return file.startsWith(root.endsWith(sep) ? root : root + sep) ? file : undefined;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

export function mountWebStatic(app: Hono, webRoot: string | undefined): void {
  app.get("*", async (c) => {
    if (!webRoot) return c.req.path === "/" ? c.html(NOT_BUILT) : c.notFound();
    const file = resolveInside(webRoot, c.req.path);
    if (!file || !(await isFile(file))) {
      if (c.req.path === "/") return c.html(NOT_BUILT);
      return c.notFound();
    }
    const type = TYPES[extname(file)] ?? "application/octet-stream";
    // Vite fingerprints asset names, so they can be cached for good; index.html never.
    const cache = c.req.path.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache";
    return c.body(new Uint8Array(await readFile(file)), 200, { "content-type": type, "cache-control": cache });
  });
}
