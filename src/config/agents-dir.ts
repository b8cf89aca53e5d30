/**
 * The Go nanobot's `agents/` directory: one Markdown file per agent, YAML front-matter for its
 * fields and the body as its instructions. The file name (without `.md`) is the agent's name.
 * `mode: subagent` keeps an agent out of the published entrypoints, `default: true` puts one
 * first, and an MCP servers file beside `agents/` supplies the servers.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../core/errors.js";
import { interpolateConfig } from "./interpolate.js";
import type { DeclaredEnv, Env } from "./interpolate.js";
import { isPlainObject, normalizeConfig } from "./normalize.js";
import type { PlainObject } from "./normalize.js";
import { parseConfigText } from "./parse-file.js";
import { agentSchema } from "./schema-agents.js";
import type { AgentConfig } from "./schema-agents.js";
import { validateWith } from "./validate.js";

export interface AgentsDirResult {
  agents: Record<string, AgentConfig>;
  warnings: string[];
  /**
   * Go's entrypoint rule for a directory: every agent not in `mode: subagent`, the default one
   * (`default: true`, else the first by name) first. Empty when the directory has no agents.
   */
  entrypoint: string[];
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
    // Hidden files and a README are notes, not agents (as in Go).
    names = (await readdir(dir))
      .filter((n) => n.toLowerCase().endsWith(".md") && !n.startsWith(".") && n.toLowerCase() !== "readme.md")
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") {
      return { agents: {}, warnings: [], entrypoint: [] };
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
    const name = fileName.slice(0, -".md".length);
    if (typeof doc.id === "string" && doc.id !== name) {
      warnings.push(`${label}: id "${doc.id}" is ignored; the file name names the agent ("${name}"), as in the Go nanobot`);
    }
    agents[name] = result.value;
  }
  return { agents, warnings, entrypoint: directoryEntrypoint(agents, opts.label ?? "agents") };
}

/** Go's rules: at most one `default: true`, never on a subagent; the default leads the list. */
function directoryEntrypoint(agents: Record<string, AgentConfig>, label: string): string[] {
  const names = Object.keys(agents).sort();
  const marked = names.filter((n) => agents[n]?.default === true);
  if (marked.length > 1) {
    throw new ConfigError(`${label}: several agents are marked default: true (${marked.join(", ")}); mark one`, { file: label, path: "default" });
  }
  const published = names.filter((n) => agents[n]?.mode !== "subagent");
  const chosen = marked[0];
  if (chosen && agents[chosen]?.mode === "subagent") {
    throw new ConfigError(`${label}/${chosen}.md: an agent cannot be both mode: subagent and default: true`, { file: `${label}/${chosen}.md`, path: "mode" });
  }
  const first = chosen ?? published[0];
  return first ? [first, ...published.filter((n) => n !== first)] : [];
}

const SERVER_FILES = ["mcp-servers.yaml", "mcp-servers.yml", "mcp-servers.json", "mcpServers.yaml", "mcpServers.yml", "mcpServers.json"];

/**
 * A directory config's MCP servers file beside `agents/` (Go: `mcp-servers.yaml|json`; its
 * example ships `mcpServers.yaml`, so both spellings load). At most one may exist. Returns the
 * servers as written (interpolated), or undefined when there is no such file.
 */
export async function loadDirectoryServers(
  dir: string,
  opts: { env: Env; declared?: DeclaredEnv },
): Promise<{ servers: Record<string, unknown>; file: string } | undefined> {
  const present: string[] = [];
  for (const name of SERVER_FILES) {
    try {
      present.push(await readFile(join(dir, name), "utf8").then(() => name));
    } catch {
      // absent
    }
  }
  if (present.length === 0) return undefined;
  if (present.length > 1) {
    throw new ConfigError(`${present.join(" and ")}: only one MCP servers file is allowed beside agents/`, { file: present[0] });
  }
  const file = present[0]!;
  const text = await readFile(join(dir, file), "utf8");
  const raw = parseConfigText(text, file.endsWith(".json") ? "json" : "yaml", file);
  const doc = interpolateConfig(raw, { env: opts.env, file, declared: opts.declared });
  return { servers: doc, file };
}

/**
 * Completes a Go directory config in place, before validation: the MCP servers file beside
 * `agents/` (ignored, with a warning, when the config file has `mcpServers`, as in Go) and
 * `publish.entrypoint` from the directory's rules when the config file sets none.
 */
export async function applyDirectoryConfig(
  doc: PlainObject,
  dir: string,
  md: AgentsDirResult,
  opts: { env: Env; declared?: DeclaredEnv },
): Promise<string[]> {
  if (Object.keys(md.agents).length === 0) return [];
  const warnings: string[] = [];
  const found = await loadDirectoryServers(dir, opts);
  if (found) {
    const existing = doc.mcpServers;
    if (isPlainObject(existing) && Object.keys(existing).length > 0) {
      warnings.push(`${found.file}: ignored, because the config file defines mcpServers (as in the Go nanobot)`);
    } else {
      const normalized = normalizeConfig({ mcpServers: found.servers });
      warnings.push(...normalized.warnings.map((w) => `${found.file}: ${w}`));
      doc.mcpServers = normalized.value.mcpServers;
    }
  }
  const publish = isPlainObject(doc.publish) ? doc.publish : {};
  if (publish.entrypoint === undefined && md.entrypoint.length > 0) doc.publish = { ...publish, entrypoint: md.entrypoint };
  return warnings;
}
