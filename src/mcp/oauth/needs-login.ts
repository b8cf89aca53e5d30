/** A server wants an OAuth login and nobody here can give it: the text says who must act. */
export class NeedsLoginError extends Error {
  constructor(readonly server: string) {
    super(needsLoginMessage(server));
    this.name = "NeedsLoginError";
  }
}

/** The one wording every face shows (CLI, channels, web UI). */
export function needsLoginMessage(server: string): string {
  return `needs an OAuth login: an admin must run \`nanobot mcp login ${server}\``;
}

export function isNeedsLogin(err: unknown): err is NeedsLoginError {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof NeedsLoginError) return true;
  }
  return false;
}
