/**
 * What a platform may say about its message. Metadata is for platform facts (message id, chat
 * type, sender name, thread); the agent layer also reads a few keys as instructions (which agent
 * answers, which session it lands in), and those may only come from in-process publishers
 * (cron, sub-agents, the faces). A platform message naming them is refused its claim here: the
 * keys are dropped, the rest of the metadata passes.
 */

/**
 * Keys that steer routing or privileges, or that the gate stamps itself. `agent` picks the
 * answering agent (its tools, its model); `sessionKey` and `modelPreset` would move the message
 * into another conversation or model; `channel`, `chatId`, `senderId`, `isDirect` and
 * `username` are the gate's own facts about the sender, which a platform field must not
 * contradict. Delivery hints about the sender's own chat (`messageId`, `stream`) stay.
 */
export const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set([
  "agent",
  "sessionKey",
  "modelPreset",
  "channel",
  "chatId",
  "senderId",
  "isDirect",
  "username",
]);

export interface CleanedMetadata {
  metadata: Record<string, unknown>;
  /** Reserved keys that were present and dropped (for the log). */
  dropped: string[];
}

/** A copy of `metadata` without the reserved keys (compared case-insensitively, so `Agent` goes too). */
export function platformMetadata(metadata: Record<string, unknown> | undefined): CleanedMetadata {
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  if (!metadata) return { metadata: out, dropped };
  for (const [key, value] of Object.entries(metadata)) {
    if (isReserved(key)) dropped.push(key);
    else out[key] = value;
  }
  return { metadata: out, dropped };
}

const RESERVED_LOWER = new Set([...RESERVED_METADATA_KEYS].map((k) => k.toLowerCase()));

function isReserved(key: string): boolean {
  return RESERVED_LOWER.has(key.trim().toLowerCase());
}

/**
 * A platform's session override is kept only inside the channel's own namespace
 * (`<channel>:…`, e.g. a Telegram forum topic); anything else would write into another
 * channel's or an internal session.
 */
export function ownSessionKey(channel: string, sessionKey: string | undefined): string | undefined {
  if (!sessionKey) return undefined;
  return sessionKey.startsWith(`${channel}:`) && sessionKey.length > channel.length + 1 ? sessionKey : undefined;
}
