/**
 * Session keys are `channel:chatId`. Every face derives its key here so the CLI, the HTTP API
 * and chat channels agree on where a conversation lives.
 */

export const DEFAULT_CLI_SESSION_KEY = "cli:direct";
export const DEFAULT_API_SESSION_KEY = "api:default";
/** All channels share this session when `unifiedSession` is on. */
export const UNIFIED_SESSION_KEY = "unified:default";

export interface SessionKeyInput {
  channel: string;
  chatId?: string;
  /** `agents.defaults.unifiedSession`: one conversation across every channel. */
  unified?: boolean;
}

/** The key for a conversation: `unified:default` when unified, else `channel:chatId`. */
export function sessionKeyFor(input: SessionKeyInput): string {
  if (input.unified) return UNIFIED_SESSION_KEY;
  const channel = input.channel.trim();
  if (!channel || channel.includes(":")) throw new Error(`invalid channel name: ${JSON.stringify(input.channel)}`);
  const chatId = input.chatId?.trim();
  if (!chatId) {
    if (channel === "cli") return DEFAULT_CLI_SESSION_KEY;
    if (channel === "api") return DEFAULT_API_SESSION_KEY;
    throw new Error(`channel ${channel} needs a chat id for its session key`);
  }
  return `${channel}:${chatId}`;
}

/** The HTTP API's session: `api:<session_id>`, or `api:default` without one. */
export function apiSessionKey(sessionId?: string | null): string {
  return sessionKeyFor({ channel: "api", chatId: sessionId ?? undefined });
}

/** Splits a key at its first `:` (chat ids may contain more colons). */
export function parseSessionKey(key: string): { channel: string; chatId: string } {
  const at = key.indexOf(":");
  if (at <= 0 || at === key.length - 1) throw new Error(`invalid session key: ${JSON.stringify(key)} (expected channel:chatId)`);
  return { channel: key.slice(0, at), chatId: key.slice(at + 1) };
}

export function isValidSessionKey(key: string): boolean {
  const at = key.indexOf(":");
  return at > 0 && at < key.length - 1;
}
