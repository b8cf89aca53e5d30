/**
 * `loadConfig`: find the file, read it (JSON or YAML), add `agents/*.md`, resolve. Everything
 * that varies per machine (env, cwd, the explicit path) is a parameter.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../core/errors.js";
import { rememberSecrets } from "../core/scrub.js";
import { applyDirectoryConfig, loadAgentsDir } from "./agents-dir.js";
import type { Env } from "./interpolate.js";
import { locateConfig } from "./lookup.js";
import type { ConfigSource } from "./lookup.js";
import { configSecrets } from "./mask.js";
import { detectFormat, parseConfigText } from "./parse-file.js";
import type { ConfigFormat } from "./parse-file.js";
import { nanobotHome } from "./paths.js";
import { prepareDocument, resolveDocument } from "./resolve.js";
import type { NanobotConfig } from "./schema.js";

export interface LoadConfigOptions {
  /** `--config PATH` (wins over everything). */
  configPath?: string;
  env?: Env;
  cwd?: string;
}

export interface LoadedConfig {
  config: NanobotConfig;
  /** Absolute path of the file read; undefined when the defaults apply. */
  path?: string;
  /** How the file was chosen. */
  source: ConfigSource;
  format?: ConfigFormat;
  /** Unknown keys and suspicious settings, one line each, for stderr. */
  warnings: string[];
  /** `$NANOBOT_HOME`. */
  home: string;
  /** The `agents/` directory that was read (whether or not it existed). */
  agentsDir: string;
  /** Provider names filled in from environment variables. */
  envProviders: string[];
}

/** Loads and resolves the configuration. Throws ConfigError with a one-line message. */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const home = nanobotHome(env, cwd);
  const location = await locateConfig({ configPath: opts.configPath, env, cwd });

  let raw: Record<string, unknown> = {};
  let format: ConfigFormat | undefined;
  if (location.file) {
    const text = await readText(location.file, location.display);
    format = detectFormat(location.file, text);
    raw = parseConfigText(text, format, location.display);
  }

  const prepared = prepareDocument(raw, location.display, env);
  const agentsDir = join(location.dir, "agents");
  const mdAgents = await loadAgentsDir(agentsDir, { env, declared: prepared.declared });
  const dirWarnings = await applyDirectoryConfig(prepared.doc, location.dir, mdAgents, { env, declared: prepared.declared });
  const resolved = resolveDocument(prepared.doc, {
    file: location.display,
    env,
    baseDir: location.dir,
    home,
    extraAgents: mdAgents.agents,
  });
  // From here on every printer (logs, errors, status) masks these values wherever they reappear.
  rememberSecrets(configSecrets(resolved.config));

  return {
    config: resolved.config,
    path: location.file,
    source: location.source,
    format,
    warnings: [...prepared.warnings, ...mdAgents.warnings, ...dirWarnings, ...resolved.warnings],
    home,
    agentsDir,
    envProviders: resolved.envProviders,
  };
}

/**
 * Resolves an in-memory document (a library user's object, a test). Same rules as a file,
 * without lookup or `agents/`.
 */
export function resolveConfig(
  raw: Record<string, unknown>,
  opts: { env?: Env; cwd?: string; file?: string; envProviders?: boolean } = {},
): { config: NanobotConfig; warnings: string[] } {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const file = opts.file ?? "config";
  const prepared = prepareDocument(raw, file, env);
  const resolved = resolveDocument(prepared.doc, {
    file,
    env,
    baseDir: cwd,
    home: nanobotHome(env, cwd),
    envProviders: opts.envProviders,
  });
  return { config: resolved.config, warnings: [...prepared.warnings, ...resolved.warnings] };
}

async function readText(path: string, display: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).replace(/^\uFEFF/, "");
  } catch (err) {
    throw new ConfigError(`${display}: cannot read the config file (${(err as NodeJS.ErrnoException).code ?? "error"})`, {
      file: display,
      cause: err,
    });
  }
}
