/**
 * `channels.matrix`: the Python nanobot's keys, unmodified (homeserver, userId, password,
 * accessToken, deviceId, e2eeEnabled, sasVerification, syncStopGraceSeconds, maxMediaBytes,
 * maxConcurrentMediaDownloads, allowFrom, groupPolicy, groupAllowFrom, allowRoomMentions,
 * streaming), plus nanobot's own `streamEditIntervalMs` and `sendProgress`. Keys nanobot reads
 * but does not honour are warned about (see `matrixSettingNotes`).
 */
import { z } from "zod";
import { bool, idString, nonNegativeInt, nonNegativeNumber, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

export const DEFAULT_MATRIX_MEDIA_BYTES = 20 * 1024 * 1024;

export const matrixConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The homeserver's client-server API base; also how tests and self-hosted servers are reached. */
  homeserver: str().default("https://matrix.org"),
  /** The bot's full Matrix id, `@name:server`. */
  userId: str().optional(),
  /** Logs in with the password (the session is kept under the home and reused). */
  password: str().optional(),
  /** An existing session's access token (Element: Settings → Help & About → Access Token). */
  accessToken: str().optional(),
  deviceId: str().optional(),
  /**
   * End-to-end encryption (Rust crypto, keys in memory): encrypted rooms are read and written.
   * On by default, as in the Python nanobot.
   */
  e2eeEnabled: bool().default(true),
  sasVerification: bool().default(false),
  syncStopGraceSeconds: nonNegativeNumber().optional(),
  /** Largest attachment downloaded or uploaded; 0 refuses all media. */
  maxMediaBytes: nonNegativeInt().default(DEFAULT_MATRIX_MEDIA_BYTES),
  maxConcurrentMediaDownloads: positiveInt().default(2),
  allowFrom: z.array(idString(), { error: "expected a list of Matrix user ids" }).default([]),
  /**
   * Rooms with more than two members: "open" answers every message, "mention" only when the
   * bot is mentioned (or its message is replied to), "allowlist" every message in `groupAllowFrom` rooms.
   */
  groupPolicy: oneOf(["open", "mention", "allowlist"]).default("open"),
  groupAllowFrom: z.array(idString(), { error: "expected a list of room ids" }).default([]),
  /** With groupPolicy "mention", an @room mention counts too. */
  allowRoomMentions: bool().default(false),
  /** Stream replies by editing one message (`m.replace`); off by default as in the Python nanobot. */
  streaming: bool().default(false),
  /** Minimum gap between two edits of a streamed reply (the Python nanobot: 2 s). */
  streamEditIntervalMs: positiveInt().default(2000),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type MatrixConfig = z.output<typeof matrixConfigSchema> & { userId: string };

/** A Matrix user id: `@localpart:server`. */
const USER_ID = /^@[^:\s]+:\S+$/;

export function parseMatrixConfig(raw: unknown, name = "matrix"): MatrixConfig {
  const parsed = parseChannelConfig(name, matrixConfigSchema, raw);
  const refuse = (key: string, expected: string): never => {
    const path = `channels.${name}.${key}`;
    throw new ConfigError(`${path}: expected ${expected}`, { path, expected });
  };
  if (!parsed.userId) return refuse("userId", "the bot's Matrix id (@name:server)");
  if (!USER_ID.test(parsed.userId)) return refuse("userId", `a Matrix id of the form @name:server, got "${parsed.userId}"`);
  if (!parsed.password && !parsed.accessToken) return refuse("accessToken", "an access token (or channels." + name + ".password to log in)");
  try {
    new URL(parsed.homeserver);
  } catch {
    return refuse("homeserver", `an http(s) URL, got "${parsed.homeserver}"`);
  }
  return { ...parsed, userId: parsed.userId };
}
