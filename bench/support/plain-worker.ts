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
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { assertBuilt } from "../../test/support/built.js";
import { BENCH_DIR, REPO_DIR } from "./processes.js";

export const PLAIN_WORKER_DIR = join(BENCH_DIR, ".worker");
const SRC_DIR = join(REPO_DIR, "src");
const DIST_DIR = join(REPO_DIR, "dist");

/** Throws unless `dist/` was built after the last change under `src/`. */
export function assertLibraryBuilt(srcDir = SRC_DIR, distDir = DIST_DIR): void {
  assertBuilt(join(distDir, "index.js"), "the peers bench", srcDir);
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
