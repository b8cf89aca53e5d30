// Loads the bundled CLI (dist/bundle/main.cjs, built by scripts/bundle-cli.mjs) with V8's code
// cache: compiling the bundle is most of what start-up costs after Node's own boot, and the
// cache lets V8 skip it. The build writes the cache after a warm-up turn
// (scripts/warm-code-cache.mjs). A Node version the build did not run writes its own cache on
// its first start, when dist/ is writable. A cache V8 rejects (other V8 flags) is left as it is:
// that start compiles, as it would without one.
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import vm from "node:vm";

/**
 * The CommonJS wrapper, with `__load` for the bundle's `import()` of external packages (the
 * build rewrites them): a script compiled from a code cache cannot run `import()` itself on
 * Node 20.
 */
function wrapBundle(source) {
  return `(function (exports, require, module, __filename, __dirname, __load) {\n${source}\n})`;
}

/** Compiles `source` as `filename`, with `cachedData` when given. */
export function compileBundle(source, filename, cachedData) {
  // lineOffset: the wrapper's own first line; stack traces and source maps keep the file's lines.
  return new vm.Script(wrapBundle(source), { filename, lineOffset: -1, cachedData });
}

/** Imports for the bundle: bare package names resolve from here as from dist/bundle/. */
function load(specifier) {
  return import(specifier);
}

/** Where this Node version keeps the cache of `bundleFile` (V8 refuses another version's). */
export function cacheFileOf(bundleFile) {
  return `${bundleFile}.${process.version}-${process.arch}.cache`;
}

/** Writes `data` to `file` whole or not at all (another process may be reading it). */
export function writeCache(file, data) {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, file);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

/** The cache, unless absent or older than the bundle (V8 itself only checks the source's length). */
function readCache(bundleFile, cacheFile) {
  try {
    if (statSync(cacheFile).mtimeMs < statSync(bundleFile).mtimeMs) return undefined;
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

/** Runs the bundle at `bundleFile` as a CommonJS module and returns its exports. */
export function loadBundle(bundleFile) {
  const cacheFile = cacheFileOf(bundleFile);
  // The build keeps the bundle pure ASCII, which Latin-1 reads as is, without UTF-8's decoding.
  const source = readFileSync(bundleFile, "latin1");
  const cachedData = readCache(bundleFile, cacheFile);
  const script = compileBundle(source, bundleFile, cachedData);
  if (process.env.NANOBOT_WRITE_CODE_CACHE === "1") {
    // The build's warm-up turn: the cache then holds every function the turn compiled.
    process.once("exit", () => writeCache(cacheFile, script.createCachedData()));
  } else if (cachedData === undefined) {
    try {
      writeCache(cacheFile, script.createCachedData());
    } catch {
      // A read-only install: every start compiles, as it would without the cache.
    }
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, dirname(bundleFile), load);
  return module.exports;
}
