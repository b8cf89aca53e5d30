/**
 * Files no tool may write, one list for every tool: exec's deny rules read it as spellings in a
 * command, the file tools compare it with the file they actually opened (path and inode, so a
 * symlink or a hard link to the file is refused too).
 */
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { HISTORY_FILE } from "../../memory/workspace.js";

/** Workspace-relative files whose writes would corrupt nanobot's own memory. */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = [HISTORY_FILE];

/**
 * The protected entry the opened file is, or undefined. `realRoot` is the workspace's real
 * path; `held` and `stats` describe the opened descriptor.
 */
export async function protectedMatch(realRoot: string, list: readonly string[], held: string, stats?: Stats): Promise<string | undefined> {
  for (const rel of list) {
    const file = path.join(realRoot, rel);
    if (held === file) return rel;
    if (!stats) continue;
    const info = await stat(file).catch(() => undefined);
    if (info && info.dev === stats.dev && info.ino === stats.ino) return rel;
  }
  return undefined;
}

export function protectedMessage(input: string, rel: string): string {
  return (
    `Error: access denied: '${input}' is ${rel}, which nanobot maintains itself (consolidated history); ` +
    `no tool may write it. Keep notes in other files such as memory/MEMORY.md.`
  );
}
