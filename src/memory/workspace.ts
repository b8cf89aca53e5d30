/**
 * The agent's workspace on disk: bootstrap files, `memory/` and `skills/`. `ensureWorkspace`
 * creates what is missing from templates (never overwriting the user's edits).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readTextIfPresent } from "./file-cache.js";
import { BOOTSTRAP_FILES, WORKSPACE_TEMPLATES, isTemplate } from "./templates.js";

export const MEMORY_FILE = "memory/MEMORY.md";
export const HISTORY_FILE = "memory/history.jsonl";
export const HEARTBEAT_FILE = "HEARTBEAT.md";

/** Creates the workspace layout; returns the files it created (workspace-relative). */
export function ensureWorkspace(workspace: string): string[] {
  const created: string[] = [];
  mkdirSync(join(workspace, "skills"), { recursive: true });
  mkdirSync(join(workspace, "memory"), { recursive: true });
  for (const [rel, content] of Object.entries(WORKSPACE_TEMPLATES)) {
    const path = join(workspace, rel);
    if (existsSync(path)) continue;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content, { flag: "wx" });
    created.push(rel);
  }
  return created;
}

/** A workspace file's text, or undefined when missing or unreadable. */
export function readWorkspaceFile(workspace: string, relativePath: string): string | undefined {
  try {
    return readTextIfPresent(join(workspace, relativePath));
  } catch {
    return undefined;
  }
}

export interface BootstrapSection {
  file: string;
  content: string;
}

/** The bootstrap files worth putting in the prompt: present, non-empty and edited from the template. */
export function readBootstrapFiles(workspace: string): BootstrapSection[] {
  const out: BootstrapSection[] = [];
  for (const file of BOOTSTRAP_FILES) {
    const content = readWorkspaceFile(workspace, file);
    if (content === undefined || !content.trim() || isTemplate(file, content)) continue;
    out.push({ file, content: content.trim() });
  }
  return out;
}

/** MEMORY.md when it holds more than the template. */
export function readMemory(workspace: string): string | undefined {
  const content = readWorkspaceFile(workspace, MEMORY_FILE);
  if (content === undefined || !content.trim() || isTemplate(MEMORY_FILE, content)) return undefined;
  return content.trim();
}
