/**
 * Hides credentials before a config is printed or logged. Keys are matched by name (apiKey,
 * token, secret, password, Authorization, …), including env-variable and header names.
 */
import { isPlainObject } from "./normalize.js";

/** Lower-cased key with `_`/`-` removed must end with one of these to be a secret. */
const SECRET_SUFFIXES = [
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

function maskAny(value: unknown, secret: boolean): unknown {
  if (typeof value === "string") return secret ? maskValue(value) : value;
  if (Array.isArray(value)) return value.map((v) => maskAny(v, secret));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    // Under a secret name (a Go `env` entry such as OPENAI_API_KEY: {default: …}) only the
    // value-carrying field is secret, not its description.
    for (const [k, v] of Object.entries(value)) out[k] = maskAny(v, isSecretKey(k) || (secret && k === "default"));
    return out;
  }
  return value;
}
