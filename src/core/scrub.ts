/**
 * The one place that decides what a credential looks like in text, for every printer (logs,
 * `status`, `config check`, `mcp list`, CLI errors). It removes:
 * - values the loaded config holds as secrets (`rememberSecrets`), wherever they reappear —
 *   a Telegram token inside an API path, a key echoed on an MCP server's stderr;
 * - the password (and a token-shaped user) of a URL's userinfo, secret query parameters
 *   (`?token=…`, `api_key=…`, `sig=…`);
 * - `Bearer …`/`Basic …` credentials, well-known token formats (`sk-…`, `ghp_…`, `xoxb-…`, …);
 * - values after a secret-named flag or assignment (`--api-key=…`, `--token …`, `API_KEY=…`,
 *   `"apiKey": "…"`).
 * Error messages quote URLs and command lines verbatim, so key-name redaction alone lets
 * them through.
 */

export const SCRUBBED = "****";

/** Lower-cased key with `_`/`-` removed must end with one of these to be a secret. */
const SECRET_SUFFIXES = [
  // `SEARCH_KEY`, `X-Key`: env and header names ending in "key" carry keys.
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "credential",
  "credentials",
  "authorization",
  "privatekey",
  "accesskey",
  "encryptkey",
  "encryptionkey",
  "cookie",
];

/** Names ending like a secret that only identify things (logs are full of `sessionKey`). */
const NOT_SECRET = new Set(["sessionkey", "cachekey", "idempotencykey", "primarykey", "partitionkey", "sortkey", "routingkey", "dedupekey", "publickey", "hotkey"]);

/** `apiKey`, `GITHUB_TOKEN`, `X-Api-Key`, `--password`: a name whose value is a credential. */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[_-]/g, "");
  return !NOT_SECRET.has(k) && SECRET_SUFFIXES.some((s) => k.endsWith(s));
}

/** `sk-proj-abcdefgh1234` → `sk-…1234`; short values → `****`; empty stays empty. */
export function maskValue(value: string): string {
  // Already masked (printers may pass text through twice): keep the helpful `sk-…1234` form.
  if (value === "" || value === SCRUBBED || value.includes("…")) return value;
  if (value.length < 12) return SCRUBBED;
  return `${value.slice(0, 3)}…${value.slice(-4)}`;
}

/** Credential formats recognisable on their own (OpenAI/Anthropic, GitHub, Slack, GitLab, AWS, Google, Hugging Face). */
const TOKEN_SHAPE =
  /\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposre]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,})/g;

/** Whether a whole string is a well-known token format. */
export function isTokenShaped(value: string): boolean {
  TOKEN_SHAPE.lastIndex = 0;
  const m = TOKEN_SHAPE.exec(value);
  return m !== null && m.index === 0 && m[0].length === value.length;
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
/** `Bearer x`, and `Basic x` only when x looks like base64 ("Basic authentication" is prose). */
const AUTH_SCHEME = /\b(Bearer\s+|Basic\s+(?=[A-Za-z0-9+/]*[0-9+/=]))[A-Za-z0-9._~+/=-]{4,}/g;
/** `--api-key=v`, `--token v`, `-password v`: group 1 flag, 2 separator, 3 value. */
const FLAG_IN_TEXT = /(?<![\w-])(--?[A-Za-z][\w-]*)(=|[ \t]+)([^\s"'`]+)/g;
/** `API_KEY=v` (env assignments, form bodies): group 1 name, 2 value. */
const ASSIGN_IN_TEXT = /(?<![\w-])([A-Za-z_][\w.-]*)=([^\s&"'`;,]+)/g;
/** `"apiKey": "v"` (JSON quoted inside a message). */
const JSON_PAIR_IN_TEXT = /"([^"\\]{1,64})"(\s*:\s*)"((?:[^"\\]|\\.)*)"/g;
/** Query parameter names (lower-case, `_`/`-` removed) whose values are credentials. */
const SECRET_PARAM = /(token|key|secret|password|passwd|pwd|auth|authorization|signature|sig|credential|session)$/;

function isSecretParam(name: string): boolean {
  return SECRET_PARAM.test(name.toLowerCase().replace(/[_-]/g, ""));
}

/** Values the loaded configuration holds as secrets, longest first so overlaps mask whole. */
const known = new Set<string>();
let knownList: string[] = [];
/** Shorter values are too likely to be ordinary words. */
const MIN_KNOWN = 6;
/** A process loading many configs (tests) must not grow this without bound. */
const MAX_KNOWN = 2000;

/** Remembers config secret values so any later text quoting them is masked. */
export function rememberSecrets(values: Iterable<string>): void {
  let added = false;
  for (const v of values) {
    if (v.length < MIN_KNOWN || known.has(v) || v === SCRUBBED) continue;
    if (known.size >= MAX_KNOWN) known.delete(known.values().next().value as string);
    known.add(v);
    added = true;
  }
  if (added) knownList = [...known].sort((a, b) => b.length - a.length);
}

/** The credentials inside one string: URL passwords and secret query values, token-shaped words, auth-scheme tokens. */
export function secretsInText(text: string): string[] {
  const found: string[] = [];
  for (const raw of text.match(URL_IN_TEXT) ?? []) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      continue;
    }
    if (url.password) found.push(decodeURIComponent(url.password), url.password);
    if (url.username && isTokenShaped(decodeURIComponent(url.username))) found.push(decodeURIComponent(url.username));
    for (const [name, value] of url.searchParams) if (value && isSecretParam(name)) found.push(value);
  }
  for (const m of text.matchAll(TOKEN_SHAPE)) found.push(m[0]);
  for (const m of text.matchAll(AUTH_SCHEME)) found.push(m[0].slice(m[1]?.length ?? 0));
  return found;
}

/** A query parameter whose name hints at a credential; parsing a URL costs ~10 µs, this far less. */
const SECRET_QUERY_HINT = /[?&][^=&#]*(?:token|key|secret|pass|pwd|auth|sig|credential|session)[^=&#]*=/i;

function scrubUrl(raw: string): string {
  if (!raw.includes("@") && !SECRET_QUERY_HINT.test(raw)) return raw;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  let changed = false;
  if (url.password) {
    url.password = SCRUBBED;
    changed = true;
  }
  if (url.username && isTokenShaped(decodeURIComponent(url.username))) {
    url.username = SCRUBBED;
    changed = true;
  }
  for (const name of [...url.searchParams.keys()]) {
    if (isSecretParam(name)) {
      url.searchParams.set(name, SCRUBBED);
      changed = true;
    }
  }
  return changed ? url.toString() : raw;
}

/** `text` with every credential it carries masked; the same string when clean. */
export function scrubSecretText(text: string): string {
  if (text.length < 4) return text;
  let out = text;
  for (const v of knownList) if (out.includes(v)) out = out.split(v).join(maskValue(v));
  // Every log line passes here: each pattern runs only when its cheap marker is present.
  if (out.includes("://")) out = out.replace(URL_IN_TEXT, scrubUrl);
  if (out.includes("Bearer") || out.includes("Basic")) out = out.replace(AUTH_SCHEME, `$1${SCRUBBED}`);
  out = out.replace(TOKEN_SHAPE, (m) => maskValue(m));
  if (out.includes("-")) {
    out = out.replace(FLAG_IN_TEXT, (all, flag: string, sep: string, value: string) => (isSecretKey(flag) && !value.startsWith("-") ? `${flag}${sep}${maskValue(value)}` : all));
  }
  if (out.includes("=")) out = out.replace(ASSIGN_IN_TEXT, (all, name: string, value: string) => (isSecretKey(name) ? `${name}=${maskValue(value)}` : all));
  if (out.includes('"')) {
    out = out.replace(JSON_PAIR_IN_TEXT, (all, name: string, colon: string, value: string) => (isSecretKey(name) && value ? `"${name}"${colon}"${maskValue(value)}"` : all));
  }
  return out;
}

/**
 * Applies `scrubSecretText` to every string in plain data and masks values under secret
 * names (`apiKey`, `X-Api-Key`, `GITHUB_TOKEN`), copy-on-write, bounded depth.
 */
export function scrubSecretData<T>(value: T, depth = 6): T {
  if (typeof value === "string") return scrubSecretText(value) as T;
  if (depth <= 0 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) {
    const message = scrubSecretText(value.message);
    return (message === value.message ? value : { name: value.name, message }) as T;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const s = scrubSecretData(v, depth - 1);
      if (s !== v) (out ??= value.slice())[i] = s;
    });
    return (out ?? value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const s = typeof v === "string" && isSecretKey(k) ? maskValue(v) : scrubSecretData(v, depth - 1);
    if (s !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = s;
  }
  return (out ?? value) as T;
}
