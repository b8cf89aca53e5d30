/**
 * Where nanobot keeps its files. Everything hangs off `NANOBOT_HOME` (default `~/.nanobot`);
 * the environment is always passed in so tests never touch the real home directory.
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { Env } from "./interpolate.js";

/** The user's home directory as the given environment sees it. */
export function userHome(env: Env): string {
  return env.HOME || env.USERPROFILE || homedir();
}

/** Expands a leading `~` (or `~/…`) to the user's home directory. */
export function expandHome(path: string, env: Env): string {
  if (path === "~") return userHome(env);
  if (path.startsWith("~/") || path.startsWith("~\\")) return join(userHome(env), path.slice(2));
  return path;
}

/** `~` expansion, then relative paths against `base`. */
export function resolvePath(path: string, base: string, env: Env): string {
  const expanded = expandHome(path, env);
  return isAbsolute(expanded) ? expanded : resolve(base, expanded);
}

/** `$NANOBOT_HOME`, default `~/.nanobot`. Relative values resolve against `cwd`. */
export function nanobotHome(env: Env, cwd: string = process.cwd()): string {
  const configured = env.NANOBOT_HOME;
  return configured ? resolvePath(configured, cwd, env) : join(userHome(env), ".nanobot");
}

/** The default agent workspace, used when `agents.defaults.workspace` is not set. */
export function defaultWorkspace(home: string): string {
  return join(home, "workspace");
}

/** The SQLite database holding sessions, threads, checkpoints and cron jobs. */
export function stateDbPath(home: string): string {
  return join(home, "state.db");
}

/** Exported/imported session JSONL files. */
export function sessionsDir(home: string): string {
  return join(home, "sessions");
}

export function logsDir(home: string): string {
  return join(home, "logs");
}

/** The bwrap probe's verdict, kept between CLI starts (`cache/` is safe to delete at any time). */
export function sandboxProbeCacheFile(home: string): string {
  return join(home, "cache", "sandbox-probe.json");
}
