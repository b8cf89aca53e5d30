/**
 * Removes credentials that travel inside free text: the password of a URL's userinfo, secret
 * query parameters (`?token=…`, `api_key=…`) and `Bearer …` tokens. Error messages quote URLs
 * verbatim (fetch: "cannot be constructed from a URL that includes credentials: http://u:p@…"),
 * so key-name redaction alone lets them through to logs and `config check`.
 */

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{4,}/g;
/** Query parameter names (lower-case, `_`/`-` removed) whose values are credentials. */
const SECRET_PARAM = /(token|key|secret|password|passwd|pwd|auth|authorization|signature|sig|credential|session)$/;

export const SCRUBBED = "****";

function scrubUrl(raw: string): string {
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
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAM.test(name.toLowerCase().replace(/[_-]/g, ""))) {
      url.searchParams.set(name, SCRUBBED);
      changed = true;
    }
  }
  return changed ? url.toString() : raw;
}

/** `text` with URL credentials and bearer tokens replaced by `****`; the same string when clean. */
export function scrubSecretText(text: string): string {
  if (!text.includes("://") && !text.includes("earer")) return text;
  return text.replace(URL_IN_TEXT, scrubUrl).replace(BEARER, `$1${SCRUBBED}`);
}

/** Applies `scrubSecretText` to every string in plain data (copy-on-write, bounded depth). */
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
    const s = scrubSecretData(v, depth - 1);
    if (s !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = s;
  }
  return (out ?? value) as T;
}
