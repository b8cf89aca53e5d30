import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");

/** A temp directory tree; `home` is a fake $HOME so the real one is never read. */
export interface TempTree {
  root: string;
  home: string;
  write(rel: string, text: string): Promise<string>;
  cleanup(): Promise<void>;
}

export async function tempTree(): Promise<TempTree> {
  const root = await mkdtemp(join(tmpdir(), "nanobot-config-"));
  const home = join(root, "home");
  await mkdir(home, { recursive: true });
  return {
    root,
    home,
    async write(rel, text) {
      const path = join(root, rel);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      return path;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
