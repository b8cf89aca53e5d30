/**
 * Hides credentials before a config is printed or logged. Keys are matched by name (apiKey,
 * token, secret, password, Authorization, …), including env-variable and header names.
 */
import { scrubSecretText } from "../core/scrub.js";
import { isPlainObject } from "./normalize.js";

/** Lower-cased key with `_`/`-` removed must end with one of these to be a secret. */
const SECRET_SUFFIXES = [
  // `SEARCH_KEY`, `X-Key`: env and header names ending in "key" carry keys.
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "credential",
  "credentials",
  "authorization",
  "privatekey",
  "accesskey",
  "encryptkey",
  "encryptionkey",
  "cookie",
];

export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[_-]/g, "");
  return SECRET_SUFFIXES.some((s) => k.endsWith(s));
}

/** `sk-proj-abcdefgh1234` → `sk-…1234`; short values → `****`; empty stays empty. */
export function maskValue(value: string): string {
  if (value === "") return "";
  if (value.length < 12) return "****";
  return `${value.slice(0, 3)}…${value.slice(-4)}`;
}

/** A deep copy of `value` with every secret-looking string masked. */
export function maskSecrets<T>(value: T): T {
  return maskAny(value, false) as T;
}

/** `--api-key`, `-token`, `--password=…`: a command-line flag whose value is a credential. */
const FLAG = /^--?([A-Za-z][\w-]*)(=.*)?$/;

function maskArgs(values: readonly unknown[], secret: boolean): unknown[] {
  return values.map((v, i) => {
    if (typeof v !== "string") return maskAny(v, secret);
    const inline = FLAG.exec(v);
    if (inline?.[1] && inline[2] && isSecretKey(inline[1])) return `--${inline[1]}=${maskValue(inline[2].slice(1))}`;
    const prev = i > 0 ? values[i - 1] : undefined;
    const flag = typeof prev === "string" ? FLAG.exec(prev) : null;
    if (flag?.[1] && !flag[2] && isSecretKey(flag[1])) return maskValue(v);
    return maskAny(v, secret);
  });
}

function maskAny(value: unknown, secret: boolean): unknown {
  // URLs carry credentials in userinfo and query strings whatever the key is called.
  if (typeof value === "string") return secret ? maskValue(value) : scrubSecretText(value);
  if (Array.isArray(value)) return maskArgs(value, secret);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    // Under a secret name (a Go `env` entry such as OPENAI_API_KEY: {default: …}) only the
    // value-carrying field is secret, not its description.
    for (const [k, v] of Object.entries(value)) out[k] = maskAny(v, isSecretKey(k) || (secret && k === "default"));
    return out;
  }
  return value;
}
