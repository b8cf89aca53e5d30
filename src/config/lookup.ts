/**
 * Which file is the configuration: `--config PATH` > `NANOBOT_CONFIG` > `./nanobot.yaml|yml|json`
 * > `$NANOBOT_HOME/config.json|yaml|yml` (CONTRACT.md). A path may also name a directory
 * holding one of those files and/or an `agents/` folder (the Go nanobot accepts a directory).
 */
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { ConfigError } from "../core/errors.js";
import type { Env } from "./interpolate.js";
import { nanobotHome, resolvePath } from "./paths.js";

export type ConfigSource = "flag" | "env" | "cwd" | "home" | "none";

export interface ConfigLocation {
  /** Absolute path of the config file; absent when only a directory (with `agents/`) was given. */
  file?: string;
  /** The directory `agents/` and relative paths are resolved against. */
  dir: string;
  /** How the file is named in messages: the path as given, or the basename of a found file. */
  display: string;
  source: ConfigSource;
}

const CWD_NAMES = ["nanobot.yaml", "nanobot.yml", "nanobot.json"];
const HOME_NAMES = ["config.json", "config.yaml", "config.yml"];
const DIR_NAMES = [...CWD_NAMES, ...HOME_NAMES];

async function kind(path: string): Promise<"file" | "dir" | undefined> {
  try {
    const s = await stat(path);
    return s.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

async function firstFile(dir: string, names: readonly string[]): Promise<string | undefined> {
  for (const name of names) {
    const candidate = join(dir, name);
    if ((await kind(candidate)) === "file") return candidate;
  }
  return undefined;
}

async function explicit(given: string, source: "flag" | "env", env: Env, cwd: string): Promise<ConfigLocation> {
  const path = resolvePath(given, cwd, env);
  const k = await kind(path);
  if (k === "file") return { file: path, dir: join(path, ".."), display: given, source };
  if (k === "dir") {
    const file = await firstFile(path, DIR_NAMES);
    if (file) return { file, dir: path, display: join(given, basename(file)), source };
    if ((await kind(join(path, "agents"))) === "dir") return { dir: path, display: given, source };
  }
  const via = source === "flag" ? "--config" : "NANOBOT_CONFIG";
  throw new ConfigError(`${given}: config file not found (from ${via})`, { file: given, expected: "an existing file" });
}

/** Finds the configuration file, or `{ source: "none" }` when there is none anywhere. */
export async function locateConfig(opts: { configPath?: string; env: Env; cwd: string }): Promise<ConfigLocation> {
  const { env, cwd } = opts;
  if (opts.configPath) return explicit(opts.configPath, "flag", env, cwd);
  if (env.NANOBOT_CONFIG) return explicit(env.NANOBOT_CONFIG, "env", env, cwd);
  const local = await firstFile(cwd, CWD_NAMES);
  if (local) return { file: local, dir: cwd, display: basename(local), source: "cwd" };
  const home = nanobotHome(env, cwd);
  const inHome = await firstFile(home, HOME_NAMES);
  if (inHome) return { file: inHome, dir: home, display: basename(inHome), source: "home" };
  return { dir: cwd, display: "(defaults)", source: "none" };
}
