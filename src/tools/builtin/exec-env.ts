/**
 * The environment a command gets: cleared except PATH, HOME, LANG, TERM and the keys the user
 * names in `tools.exec.allowedEnvKeys`. Provider keys never pass, even when named: a command's
 * output goes back to the model, and the model must not see the credentials it runs on.
 */
import path from "node:path";

export const BASE_ENV_KEYS = ["PATH", "HOME", "LANG", "TERM"] as const;
/** Used when the parent has no PATH at all. */
const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Provider credentials by name: `*_API_KEY`, `*_AUTH_TOKEN` and nanobot's own secrets. */
export function isProviderKey(name: string): boolean {
  return /(_API_KEY|_AUTH_TOKEN)$/i.test(name) || /^NANOBOT_.*(KEY|TOKEN|SECRET)/i.test(name);
}

export interface ExecEnvOptions {
  allowedEnvKeys?: readonly string[];
  /** Appended to PATH (`tools.exec.pathAppend`, the Python nanobot's key). */
  pathAppend?: string;
  /** Put before PATH (`tools.exec.pathPrepend`): its commands win over the system's. */
  pathPrepend?: string;
}

export function execEnv(source: NodeJS.ProcessEnv, options: ExecEnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of [...BASE_ENV_KEYS, ...(options.allowedEnvKeys ?? [])]) {
    const value = source[key];
    if (value !== undefined && !isProviderKey(key)) env[key] = value;
  }
  env.PATH ||= FALLBACK_PATH;
  if (options.pathAppend) env.PATH = `${env.PATH}${path.delimiter}${options.pathAppend}`;
  if (options.pathPrepend) env.PATH = `${options.pathPrepend}${path.delimiter}${env.PATH}`;
  return env;
}

/** The absolute folders on a PATH value. */
export function pathDirs(pathValue: string | undefined): string[] {
  return (pathValue ?? "").split(path.delimiter).filter((d) => path.isAbsolute(d));
}
