/**
 * bin/bundle-loader.js: the shipped CLI is one CommonJS bundle compiled with V8's code cache.
 * Each case runs the loader in its own node process, as bin/nanobot.js does, against a small
 * bundle in a temporary directory; the last case checks the build's real bundle and cache.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const loaderUrl = pathToFileURL(join(repo, "bin/bundle-loader.js")).href;
const cacheName = `main.cjs.${process.version}-${process.arch}.cache`;

/** Shaped as the build writes it: external packages' import() goes through the loader's `__load`. */
const BUNDLE = [
  '"use strict";',
  "exports.sum = (a, b) => a + b;",
  'exports.separator = async () => (await __load("node:path")).sep;',
  'exports.fail = () => { throw new Error("from line 4"); };',
  "exports.strict = (function () { return this === undefined; })();",
  "",
].join("\n");

let dir: string;
let bundle: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "nanobot-bundle-loader-"));
  bundle = join(dir, "main.cjs");
  await writeFile(bundle, BUNDLE);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `body` (an async script with `loader` imported) in a fresh node process; its JSON output. */
function inNode(body: string): Record<string, unknown> {
  const script = `const loader = await import(${JSON.stringify(loaderUrl)});\n${body}`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000, env: { PATH: process.env.PATH } });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const LOAD_AND_REPORT = `
const b = loader.loadBundle(${"BUNDLE_PATH"});
let line = "";
try { b.fail(); } catch (err) { line = /main\\.cjs:(\\d+)/.exec(err.stack)?.[1] ?? ""; }
console.log(JSON.stringify({ sum: b.sum(2, 3), separator: await b.separator(), line, strict: b.strict }));
`;

function load(): Record<string, unknown> {
  return inNode(LOAD_AND_REPORT.replace("BUNDLE_PATH", JSON.stringify(bundle)));
}

/** Whether V8 takes the cache now on disk for the bundle (another process's view). */
function cacheAccepted(bundleFile: string, cacheFile: string): boolean {
  const out = inNode(`
const { readFileSync } = await import("node:fs");
const script = loader.compileBundle(readFileSync(${JSON.stringify(bundleFile)}, "latin1"), ${JSON.stringify(bundleFile)}, readFileSync(${JSON.stringify(cacheFile)}));
console.log(JSON.stringify({ rejected: script.cachedDataRejected }));`);
  return out.rejected === false;
}

describe("the bundle loader", () => {
  it("runs the bundle as a strict CommonJS module whose imports work and whose errors name the file's lines", () => {
    expect(load()).toEqual({ sum: 5, separator: "/", line: "4", strict: true });
  });

  it("writes this Node version's cache on the first start and uses it, unchanged, on the next (imports still work)", async () => {
    const cache = join(dir, cacheName);
    await expect(stat(cache)).rejects.toThrow();
    load();
    const first = await readFile(cache);
    expect(first.length).toBeGreaterThan(0);
    expect(cacheAccepted(bundle, cache)).toBe(true);
    const { mtimeMs } = await stat(cache);
    expect(load()).toEqual({ sum: 5, separator: "/", line: "4", strict: true });
    expect((await stat(cache)).mtimeMs).toBe(mtimeMs);
  });

  it("replaces a cache older than the bundle (V8 only checks the source's length)", async () => {
    const cache = join(dir, cacheName);
    await writeFile(cache, "stale cache of an earlier build");
    const past = new Date(Date.now() - 60_000);
    await utimes(cache, past, past);
    expect(load()).toMatchObject({ sum: 5 });
    expect(cacheAccepted(bundle, cache)).toBe(true);
  });

  it("starts with a cache V8 rejects, and leaves it for the process it was made for", async () => {
    const cache = join(dir, cacheName);
    await writeFile(cache, "not a code cache");
    expect(load()).toEqual({ sum: 5, separator: "/", line: "4", strict: true });
    expect(await readFile(cache, "utf8")).toBe("not a code cache");
  });
});

describe("the built CLI bundle", () => {
  it("is strict, pure ASCII, imports external packages through the loader, and ships a cache V8 accepts that the warm-up turn grew past a bare compile's", async () => {
    const main = join(repo, "dist/bundle/main.cjs");
    const cache = join(repo, "dist/bundle", cacheName);
    const source = await readFile(main, "latin1");
    expect(source.startsWith('"use strict";')).toBe(true);
    expect(source.search(/[\u0080-\uffff]/)).toBe(-1);
    const body = source.slice(source.indexOf("\n"));
    expect(body).toContain('__load("pg")');
    expect(body).not.toMatch(/(?<![\w$.])import\(/);
    expect(cacheAccepted(main, cache)).toBe(true);
    const bare = inNode(`
const { readFileSync } = await import("node:fs");
const script = loader.compileBundle(readFileSync(${JSON.stringify(main)}, "latin1"), ${JSON.stringify(main)});
console.log(JSON.stringify({ bytes: script.createCachedData().length }));`);
    expect((await stat(cache)).size).toBeGreaterThan(1.5 * (bare.bytes as number));
  });
});
