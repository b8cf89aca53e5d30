/**
 * The Go nanobot's `agents/` directory: one Markdown file per agent, YAML front-matter for its
 * fields and the body as its instructions. The file name (without `.md`) is the agent's name.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../core/errors.js";
import { interpolateConfig } from "./interpolate.js";
import type { DeclaredEnv, Env } from "./interpolate.js";
import { normalizeConfig } from "./normalize.js";
import { parseConfigText } from "./parse-file.js";
import { agentSchema } from "./schema-agents.js";
import type { AgentConfig } from "./schema-agents.js";
import { validateWith } from "./validate.js";

export interface AgentsDirResult {
  agents: Record<string, AgentConfig>;
  warnings: string[];
}

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Splits a Markdown file into front-matter text (possibly empty) and body. */
export function splitFrontMatter(text: string): { frontMatter: string; body: string } {
  const clean = text.replace(/^\uFEFF/, "");
  const m = FRONT_MATTER.exec(clean);
  if (!m) return { frontMatter: "", body: clean.trim() };
  return { frontMatter: m[1] ?? "", body: clean.slice(m[0].length).trim() };
}

/**
 * Loads every `*.md` in `dir` (sorted by name). A missing directory is no agents.
 * `label` is how the directory is named in messages (e.g. `agents`).
 */
export async function loadAgentsDir(
  dir: string,
  opts: { env: Env; declared?: DeclaredEnv; label?: string },
): Promise<AgentsDirResult> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.toLowerCase().endsWith(".md")).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") {
      return { agents: {}, warnings: [] };
    }
    throw err;
  }
  const agents: Record<string, AgentConfig> = {};
  const warnings: string[] = [];
  for (const fileName of names) {
    const label = `${opts.label ?? "agents"}/${fileName}`;
    const text = await readFile(join(dir, fileName), "utf8");
    const { frontMatter, body } = splitFrontMatter(text);
    const raw = parseConfigText(frontMatter, "yaml", label);
    const normalized = normalizeConfig(raw);
    warnings.push(...normalized.warnings.map((w) => `${label}: ${w}`));
    const doc = interpolateConfig(normalized.value, { env: opts.env, file: label, declared: opts.declared });
    if (body && doc.instructions !== undefined) {
      throw new ConfigError(`${label}: instructions: expected either a body or an instructions field, got both`, {
        file: label,
        path: "instructions",
      });
    }
    if (body) doc.instructions = body;
    const result = validateWith(agentSchema, doc, label);
    warnings.push(...result.warnings);
    agents[fileName.slice(0, -".md".length)] = result.value;
  }
  return { agents, warnings };
}
