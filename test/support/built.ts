/**
 * Whether a built artifact (`dist/`, the CLI bundle) is newer than the sources it is built from:
 * the CLI tests and the peers bench run the built code, so after an edit under `src/` without
 * `npm run build` they would run yesterday's code and pass or fail for the wrong reason.
 * (`npm test` builds first; a direct `npx vitest` does not.)
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_SRC_DIR = fileURLToPath(new URL("../../src", import.meta.url));

/** Newest modification time under `dir` of files ending in `ext`, ms. */
function newestMtime(dir: string, ext: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(ext)) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Throws, saying to run `npm run build`, unless `artifact` exists and was built after the last change under `srcDir`. */
export function assertBuilt(artifact: string, purpose: string, srcDir = REPO_SRC_DIR): void {
  let built: number;
  try {
    built = statSync(artifact).mtimeMs;
  } catch {
    throw new Error(`${artifact} is missing: run \`npm run build\` before ${purpose}`);
  }
  if (newestMtime(srcDir, ".ts") > built) throw new Error(`${artifact} is older than ${srcDir}: run \`npm run build\` before ${purpose}`);
}
