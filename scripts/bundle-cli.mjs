/**
 * Bundles the compiled CLI (dist/cli/main.js) into dist/bundle/ for start-up speed: Node's ESM
 * loader pays per file, and `nanobot agent -m` otherwise loads ~320 modules (170 of ours, 95 of
 * zod's) before its first LLM request. Code splitting keeps every lazy `import()` lazy, so a
 * command still loads only what it uses.
 *
 * Only the packages on the start-up path are bundled; the rest stay ordinary imports resolved
 * from node_modules (native addons, packages that locate files beside themselves, and large ones
 * only some commands need). The library entry (dist/index.js) is not bundled.
 *
 * Run by `npm run build` after tsc; `bin/nanobot.js` falls back to dist/cli/ when this is absent.
 */
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Packages inlined into the bundle (with their own dependencies). */
const BUNDLED = new Set([
  "zod",
  "commander",
  "eventsource-parser",
  "picocolors",
  "picomatch",
  "jsonrepair",
  "ipaddr.js",
  "@clack/prompts",
]);

function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Our code's imports of packages not in BUNDLED stay imports; bundled packages' own deps are inlined. */
const externals = {
  name: "nanobot-externals",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      if (args.importer.includes("/node_modules/")) return undefined;
      return BUNDLED.has(packageName(args.path)) ? undefined : { path: args.path, external: true };
    });
  },
};

/**
 * zod's namespace re-exports every locale (64 modules, ~30 % of zod's size); nanobot only uses
 * English messages, which zod configures itself from locales/en.js.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes("/node_modules/zod/") ? { path: "zod-locales", namespace: "zod-locales" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, () => ({
      contents: `export { default as en } from ${JSON.stringify(`${ROOT}node_modules/zod/v4/locales/en.js`)};`,
      resolveDir: ROOT,
    }));
  },
};

const outdir = `${ROOT}dist/bundle`;
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [`${ROOT}dist/cli/main.js`],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  plugins: [externals, zodEnglishOnly],
  // Bundled CommonJS packages (pino) call require() for Node built-ins.
  banner: { js: "import { createRequire as __nanobotRequire } from 'node:module'; const require = __nanobotRequire(import.meta.url);" },
});
