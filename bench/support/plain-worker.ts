/**
 * The side-by-side bench's worker as plain JavaScript, so no contender runs under a TypeScript
 * loader. Under `node --import tsx` every module the process loads goes through tsx's hooks
 * (a second thread in Node 20, the source copied across): the peers, loaded from their packages'
 * JavaScript, pay that per file like everyone, but nanobot's ~250 modules were also transformed
 * from source, and measured in one process each, importing the product cost ~14 MiB more RSS
 * under tsx than under plain node (the port: about the same either way). No user runs either
 * product through tsx.
 *
 * The bench's own files (worker, contenders, their helpers) are bundled by esbuild into
 * `bench/.worker/`, one file per contender; nanobot's modules stay imports of the built library
 * (`dist/`, what `import "nanobot"` loads), and packages stay imports resolved from
 * node_modules. The folder is as deep as `src/<dir>/`, so paths the code builds from its own
 * location (`../../skills/`, `../peers/`) land where they do from source.
 */
import { build } from "esbuild";
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { BENCH_DIR, REPO_DIR } from "./processes.js";

export const PLAIN_WORKER_DIR = join(BENCH_DIR, ".worker");
const SRC_DIR = join(REPO_DIR, "src");
const DIST_DIR = join(REPO_DIR, "dist");

/** Newest modification time under `dir` of files ending in `ext`, ms. */
function newestMtime(dir: string, ext: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(ext)) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Throws unless `dist/` was built after the last change under `src/`. */
export function assertLibraryBuilt(srcDir = SRC_DIR, distDir = DIST_DIR): void {
  let built: number;
  try {
    built = statSync(join(distDir, "index.js")).mtimeMs;
  } catch {
    throw new Error(`${join(distDir, "index.js")} is missing: run \`npm run build\` before the peers bench`);
  }
  if (newestMtime(srcDir, ".ts") > built) throw new Error(`${distDir} is older than ${srcDir}: run \`npm run build\` before the peers bench`);
}

let building: Promise<string> | undefined;

/** Builds the worker once per process; resolves to the path of `worker.js`. */
export function plainWorker(): Promise<string> {
  building ??= (async () => {
    assertLibraryBuilt();
    const contenders = join(BENCH_DIR, "contenders");
    const entryPoints = readdirSync(contenders)
      .filter((f) => f.endsWith(".ts") && f !== "types.ts")
      .map((f) => join(contenders, f));
    await build({
      entryPoints,
      outdir: PLAIN_WORKER_DIR,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      logLevel: "error",
      plugins: [
        {
          name: "nanobot-from-dist",
          setup(b) {
            b.onResolve({ filter: /^\./ }, (args) => {
              const target = resolve(args.resolveDir, args.path);
              if (!target.startsWith(SRC_DIR + "/")) return undefined;
              const inDist = join(DIST_DIR, relative(SRC_DIR, target));
              return { path: relative(PLAIN_WORKER_DIR, inDist), external: true };
            });
          },
        },
      ],
    });
    return join(PLAIN_WORKER_DIR, "worker.js");
  })();
  return building;
}
