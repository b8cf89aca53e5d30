/**
 * Bundles the compiled CLI (dist/cli/main.js) into one CommonJS file, dist/bundle/main.cjs, and
 * writes V8's code cache for it, for start-up speed. Node's ESM loader pays per file (`nanobot
 * agent -m` would load ~320 modules, 170 of ours and 95 of zod's, before its first LLM request),
 * and compiling the code cost more than running it: on Node 20 only a script compiled through
 * `vm.Script` can use a code cache, so the bundle is one CommonJS file that
 * bin/bundle-loader.js compiles with the cache (scripts/warm-code-cache.mjs writes it). Modules
 * reached through a lazy `import()` are bundled as functions run on first use, so a command
 * still runs only the modules it uses.
 *
 * Only the packages on the start-up path are bundled; the rest stay ordinary imports resolved
 * from node_modules (native addons, packages that locate files beside themselves, and large ones
 * only some commands need). The library entry (dist/index.js) is not bundled.
 *
 * Run by `npm run build` after tsc; `bin/nanobot.js` falls back to dist/cli/ when this is absent.
 */
import { build } from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { warmCodeCache } from "./warm-code-cache.mjs";

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

/**
 * The bundle's `import()` calls of external packages, as calls of `__load`, which
 * bin/bundle-loader.js passes in: V8 drops what tells Node how to run a script's `import()` when
 * the script comes from a code cache (Node 20: "A dynamic import callback was not specified").
 * `__load` is as long as `import`, so the source map's columns still hold. Any other `import(`
 * in the output fails the build rather than a command at run time.
 */
function routeDynamicImports(text, externals) {
  let count = 0;
  const out = text.replace(/(?<![\w$.])import\(/g, (match, offset) => {
    const call = /^import\("([^"]+)"\)/.exec(text.slice(offset, offset + 200));
    if (!call || !externals.has(call[1])) {
      throw new Error(`${outfile}: an import( at offset ${offset} that is not an external package's dynamic import: ${text.slice(offset, offset + 60)}`);
    }
    count++;
    return "__load(";
  });
  return { out, count };
}

const outdir = `${ROOT}dist/bundle`;
const outfile = `${outdir}/main.cjs`;
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: [`${ROOT}dist/cli/main.js`],
  outfile,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  metafile: true,
  write: false,
  plugins: [externals, zodEnglishOnly],
  // Without comments and with non-ASCII escaped, the file is pure ASCII and reads ~35 ms faster
  // than as UTF-8 (2.4 MB). Names stay: stack traces read as the source does.
  minifyWhitespace: true,
  charset: "ascii",
  // Our modules locate files relative to themselves (package.json, skills/, dist/web); the bundle
  // sits as deep in dist/ as they do.
  define: { "import.meta.url": "__nanobotModuleUrl" },
  // "use strict" first: it is a directive only as the file's first statement, and our modules
  // (ES modules, strict by definition) must not run as sloppy code behind the banner. `__load` is
  // the loader's parameter; required without the loader, the bundle imports for itself.
  banner: {
    js: "\"use strict\"; var __load = typeof __load === \"function\" ? __load : (specifier) => import(specifier); const __nanobotModuleUrl = require('node:url').pathToFileURL(__filename).href;",
  },
});
const dynamicExternals = new Set(
  Object.values(result.metafile.inputs).flatMap((input) => input.imports.filter((i) => i.kind === "dynamic-import" && i.external).map((i) => i.path)),
);
mkdirSync(outdir, { recursive: true });
for (const file of result.outputFiles) {
  if (file.path !== outfile) {
    writeFileSync(file.path, file.contents);
    continue;
  }
  const [banner, ...rest] = file.text.split("\n");
  if (/[\u0080-\uffff]/.test(file.text)) throw new Error(`${outfile}: non-ASCII text at offset ${file.text.search(/[\u0080-\uffff]/)}; bin/bundle-loader.js reads it as Latin-1`);
  const { out, count } = routeDynamicImports(rest.join("\n"), dynamicExternals);
  if (count === 0) throw new Error(`${outfile}: no dynamic import of an external package found; has esbuild's output changed?`);
  writeFileSync(outfile, `${banner}\n${out}`);
}
await warmCodeCache(`${ROOT}bin/nanobot.js`);
