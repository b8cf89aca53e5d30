/**
 * Skills: `skills/<name>/SKILL.md` files with YAML front-matter that teach the agent a task.
 * Built-in skills ship in the package's `skills/`; a workspace skill with the same name
 * overrides the built-in one. A skill whose required binaries or env vars are missing is
 * still listed, marked unavailable, so the agent can tell the user what to install.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readTextIfPresent } from "./file-cache.js";
import { parseFrontMatter } from "./front-matter.js";

export interface Skill {
  name: string;
  description: string;
  /** The SKILL.md file. */
  path: string;
  /** The markdown after the front-matter. */
  body: string;
  /** Always put the whole skill in the system prompt. */
  always: boolean;
  source: "builtin" | "workspace";
  available: boolean;
  /** What is missing when unavailable (`bin:ffmpeg`, `env:API_KEY`). */
  missing: string[];
}

export interface LoadSkillsOptions {
  workspace: string;
  /** Defaults to the package's `skills/` folder. */
  builtinDir?: string;
  env?: Record<string, string | undefined>;
  /** `agents.defaults.disabledSkills`. */
  disabled?: readonly string[];
}

/** `<package>/skills`, from both `src/memory/` and `dist/memory/`. */
export const BUILTIN_SKILLS_DIR = fileURLToPath(new URL("../../skills/", import.meta.url));

/**
 * Skills by name, workspace first; sorted by name in code-unit order (the same on every machine;
 * `localeCompare`'s first call loads ICU's collator, ~10 ms before a one-shot turn's request).
 */
export function loadSkills(options: LoadSkillsOptions): Skill[] {
  const env = options.env ?? process.env;
  const disabled = new Set(options.disabled ?? []);
  const byName = new Map<string, Skill>();
  for (const skill of readSkillDir(options.builtinDir ?? BUILTIN_SKILLS_DIR, "builtin", env)) byName.set(skill.name, skill);
  for (const skill of readSkillDir(join(options.workspace, "skills"), "workspace", env)) byName.set(skill.name, skill);
  return [...byName.values()].filter((s) => !disabled.has(s.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A skills folder's subfolders, listed again only when the folder's mtime changes. */
const listings = new Map<string, { mtimeMs: number; names: string[] }>();

function skillFolders(dir: string): string[] {
  // A workspace without a skills folder is common: no error is built for it on every turn.
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) return [];
  const mtimeMs = stat.mtimeMs;
  const hit = listings.get(dir);
  if (hit && hit.mtimeMs === mtimeMs) return hit.names;
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  listings.set(dir, { mtimeMs, names });
  return names;
}

/** A skills folder's SKILL.md files as `[name, path, text]`, in listing order. */
type SkillFiles = readonly (readonly [name: string, path: string, text: string])[];

function readSkillFiles(dir: string): SkillFiles {
  let names: string[];
  try {
    names = skillFolders(dir);
  } catch {
    return [];
  }
  const out: [string, string, string][] = [];
  for (const name of names) {
    const path = join(dir, name, "SKILL.md");
    try {
      const text = readTextIfPresent(path);
      if (text !== undefined) out.push([name, path, text]);
    } catch {
      // A folder whose SKILL.md cannot be read is not a skill.
    }
  }
  return out;
}

/**
 * The package's own skills are part of the installed program, like its code: read once per
 * process instead of checked on every turn (five file stats a turn). Workspace skills are
 * checked every turn, so an edit shows up on the next one.
 */
let packagedSkills: SkillFiles | undefined;

function readSkillDir(dir: string, source: Skill["source"], env: Record<string, string | undefined>): Skill[] {
  const files = dir === BUILTIN_SKILLS_DIR ? (packagedSkills ??= readSkillFiles(dir)) : readSkillFiles(dir);
  // Requirements (binaries on PATH, env vars) are checked every time: they change without a restart.
  return files.map(([name, path, text]) => parseSkill(name, path, text, source, env));
}

/** Parses one SKILL.md; the folder name is the skill's name whatever the front-matter says. */
export function parseSkill(name: string, path: string, text: string, source: Skill["source"], env: Record<string, string | undefined>): Skill {
  const { meta, body } = splitCached(path, text);
  const requires = requirementsOf(meta);
  const missing = [
    ...requires.bins.filter((bin) => !hasBinary(bin, env)).map((bin) => `bin:${bin}`),
    ...requires.env.filter((key) => !env[key]).map((key) => `env:${key}`),
  ];
  return {
    name,
    description: typeof meta.description === "string" ? meta.description.trim() : "",
    path,
    body: body.trim(),
    always: meta.always === true,
    source,
    available: missing.length === 0,
    missing,
  };
}

/** Front-matter parses by file, reused while the text is unchanged (requirements are checked every time). */
const parsed = new Map<string, { text: string; split: ReturnType<typeof splitFrontMatter> }>();

function splitCached(path: string, text: string): ReturnType<typeof splitFrontMatter> {
  const hit = parsed.get(path);
  if (hit && hit.text === text) return hit.split;
  const split = splitFrontMatter(text);
  if (parsed.size >= 512) parsed.clear();
  parsed.set(path, { text, split });
  return split;
}

function splitFrontMatter(text: string): { meta: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { meta: {}, body: text };
  return { meta: parseFrontMatter(match[1] ?? ""), body: text.slice(match[0].length) };
}

/** `metadata.nanobot.requires` (an object, or a JSON string as the Python nanobot writes it). */
function requirementsOf(meta: Record<string, unknown>): { bins: string[]; env: string[] } {
  let metadata = meta.metadata;
  if (typeof metadata === "string") {
    try {
      metadata = JSON.parse(metadata) as unknown;
    } catch {
      metadata = undefined;
    }
  }
  const nanobot = isRecord(metadata) ? metadata.nanobot : undefined;
  const requires = isRecord(nanobot) ? nanobot.requires : undefined;
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  return isRecord(requires) ? { bins: list(requires.bins), env: list(requires.env) } : { bins: [], env: [] };
}

function hasBinary(bin: string, env: Record<string, string | undefined>): boolean {
  const dirs = (env.PATH ?? "").split(delimiter).filter(Boolean);
  return dirs.some((dir) => existsSync(join(dir, bin)));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The skills section of the system prompt: `always` skills in full, the rest as one line each
 * with where to read them, unavailable ones with what they need.
 */
export function skillsPrompt(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  const always = skills.filter((s) => s.always && s.available);
  const lines = skills
    .filter((s) => !(s.always && s.available))
    .map((s) =>
      s.available
        ? `- ${s.name}: ${s.description} (read ${s.path})`
        : `- ${s.name} (unavailable: needs ${s.missing.join(", ")}): ${s.description}`,
    );
  const parts = ["# Skills", "Skills teach you how to do a task. Read a skill's file before you use it."];
  if (lines.length > 0) parts.push(lines.join("\n"));
  for (const s of always) parts.push(`## Skill: ${s.name}\n\n${s.body}`);
  return parts.join("\n\n");
}

/** Skills named as `$skill-name` in a message, in first-mention order. */
export function mentionedSkills(text: string, skills: readonly Skill[]): Skill[] {
  const byName = new Map(skills.map((s) => [s.name, s]));
  const out: Skill[] = [];
  for (const match of text.matchAll(/(?:^|\s)\$([A-Za-z0-9][\w-]*)/g)) {
    const skill = byName.get(match[1] ?? "");
    if (skill && !out.includes(skill)) out.push(skill);
  }
  return out;
}
