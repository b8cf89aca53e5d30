/**
 * Hides credentials before a config (or part of one) is printed or logged: values under secret
 * names (apiKey, token, secret, password, Authorization, …), every value of an MCP server's
 * `env` and `headers`, secret-looking command-line `args`, URL userinfo and query tokens.
 * `configSecrets` lists the raw values, so `rememberSecrets` can mask them in any later text.
 * What counts as a credential inside text is decided in core/scrub.ts, for every printer.
 */
import { isSecretKey, isTokenShaped, maskValue, scrubSecretText, secretsInText } from "../core/scrub.js";
import { isPlainObject } from "./normalize.js";

export { isSecretKey, maskValue } from "../core/scrub.js";

/** A deep copy of `value` with every secret-looking string masked. */
export function maskSecrets<T>(value: T): T {
  return maskAny(value, false) as T;
}

/** An MCP server's command line for display: `npx server --api-key sk-…abcd`. */
export function maskCommandLine(command: string, args: readonly string[]): string {
  return [command, ...(maskArgs(args, false) as string[])].join(" ");
}

/** `--api-key`, `-token`, `--password=…`: a command-line flag whose value is a credential. */
const FLAG = /^--?([A-Za-z][\w-]*)(=.*)?$/;

/** How each element of an args list is secret: the whole value, or only what scrubbing finds. */
function argSecrecy(values: readonly unknown[], i: number): "value" | "inline" | "text" {
  const v = values[i];
  if (typeof v !== "string") return "text";
  const inline = FLAG.exec(v);
  if (inline?.[1] && inline[2] && isSecretKey(inline[1])) return "inline";
  const prev = i > 0 ? values[i - 1] : undefined;
  const flag = typeof prev === "string" ? FLAG.exec(prev) : null;
  if (flag?.[1] && !flag[2] && isSecretKey(flag[1]) && !v.startsWith("-")) return "value";
  return isTokenShaped(v) ? "value" : "text";
}

function maskArgs(values: readonly unknown[], secret: boolean): unknown[] {
  return values.map((v, i) => {
    if (typeof v !== "string") return maskAny(v, secret);
    const how = argSecrecy(values, i);
    if (how === "value") return maskValue(v);
    if (how === "inline") {
      const eq = v.indexOf("=");
      return `${v.slice(0, eq)}=${maskValue(v.slice(eq + 1))}`;
    }
    return maskAny(v, secret);
  });
}

/**
 * `parentKey` "env"/"headers"/"extraHeaders": every string value below is a credential (an MCP server's
 * `env: {GITHUB_TOKEN: …}`), except a Go `env` declaration object, where only a secret name's
 * `default` is.
 */
function maskAny(value: unknown, secret: boolean, parentKey?: string): unknown {
  // URLs carry credentials in userinfo and query strings whatever the key is called.
  if (typeof value === "string") return secret ? maskValue(value) : scrubSecretText(value);
  if (Array.isArray(value)) return maskArgs(value, secret);
  if (isPlainObject(value)) {
    const all = isSecretContainer(parentKey);
    const out: Record<string, unknown> = {};
    // Under a secret name (a Go `env` entry such as OPENAI_API_KEY: {default: …}) only the
    // value-carrying field is secret, not its description.
    for (const [k, v] of Object.entries(value)) {
      const isSecret = isSecretKey(k) || (secret && k === "default") || (all && typeof v === "string");
      out[k] = maskAny(v, isSecret, k);
    }
    return out;
  }
  return value;
}

/**
 * The raw secret values in a config: what `maskSecrets` hides as a whole, and what scrubbing
 * finds inside strings (URL passwords, query tokens). An `env`/`headers` value counts when
 * its name is secret or it looks like a token — `FAULT: "healthy"` should not turn every
 * "healthy" in the logs into `****`.
 */
export function configSecrets(value: unknown): string[] {
  const found: string[] = [];
  collect(value, false, undefined, found);
  return found.filter((v) => v.length > 0);
}

function collect(value: unknown, secret: boolean, parentKey: string | undefined, found: string[]): void {
  if (typeof value === "string") {
    if (secret) found.push(value, ...value.split(/\s+/).slice(1));
    else found.push(...secretsInText(value));
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      const how = argSecrecy(value, i);
      if (how === "value" && typeof v === "string") found.push(v);
      else if (how === "inline" && typeof v === "string") found.push(v.slice(v.indexOf("=") + 1));
      else collect(v, secret, undefined, found);
    });
    return;
  }
  if (!isPlainObject(value)) return;
  const all = isSecretContainer(parentKey);
  for (const [k, v] of Object.entries(value)) {
    const named = isSecretKey(k) || (secret && k === "default");
    const looks = all && typeof v === "string" && (isTokenShaped(v) || looksRandom(v) || secretsInText(v).length > 0);
    collect(v, named || looks, k, found);
  }
}

/** `env`, `headers`, a provider's `extraHeaders`: maps whose values are all treated as credentials. */
function isSecretContainer(key: string | undefined): boolean {
  return key === "env" || (key !== undefined && /headers$/i.test(key));
}

/** Long, no spaces or path separators, letters and digits mixed: a generated credential. */
function looksRandom(v: string): boolean {
  return v.length >= 20 && /^[A-Za-z0-9_+=.:-]+$/.test(v) && /[0-9]/.test(v) && /[A-Za-z]/.test(v);
}
