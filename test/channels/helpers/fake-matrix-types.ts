/** The fake Matrix homeserver's vocabulary: its fixed ids and credentials, and what it records. */
import type { FakeKeyServer } from "./fake-matrix-keys.js";

export const MATRIX_SERVER = "fake.test";
export const MATRIX_BOT = { id: "@nanobot:fake.test", username: "@nanobot:fake.test", displayName: "Nanobot" };
export const MATRIX_TOKEN = "syt_fake_bot_token";
export const MATRIX_DEVICE = "NANOBOTDEVICE";
export const MATRIX_PASSWORD = "correct horse battery staple";
export const MATRIX_GROUP_ROOM = "!group:fake.test";

export type Json = Record<string, unknown>;

export interface MatrixEventJson {
  type: string;
  event_id: string;
  sender: string;
  origin_server_ts: number;
  content: Json;
  room_id: string;
  state_key?: string;
  unsigned?: Json;
}

/** One message the bot sent, as the homeserver holds it. */
export interface MatrixSentMessage {
  eventId: string;
  roomId: string;
  txnId: string;
  msgtype: string;
  /** The body as it stands now (after edits). */
  body: string;
  /** The first send's content. */
  content: Json;
  /** Every edit's new body, in order. */
  edits: string[];
  /** The latest content (the last edit's `m.new_content`, else the first content). */
  current: Json;
  /** `m.relates_to.m.in_reply_to.event_id`. */
  replyTo?: string;
  /** `m.relates_to.event_id` of an `m.thread` relation. */
  threadRoot?: string;
  /** For media messages: the uploaded file. */
  file?: { name: string; content: string; mimeType: string };
  redacted: boolean;
}

export interface MatrixRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  token?: string;
}

export interface FakeMatrixOptions {
  /** Serve only the legacy `/_matrix/media/v3/download` (a server before Matrix 1.11). */
  legacyMediaOnly?: boolean;
  /** `m.upload.size` advertised by the media config. */
  uploadLimit?: number;
}

export interface FakeMatrix {
  /** The homeserver base URL (`channels.matrix.homeserver`). */
  url: string;
  messages: MatrixSentMessage[];
  requests: MatrixRequest[];
  /** `PUT …/typing` calls with `typing: true`, by room. */
  typing: string[];
  /** Every typing call, on and off. */
  typingCalls: Array<{ roomId: string; typing: boolean; timeout?: number }>;
  joins: string[];
  logins: number;
  /** Routes nobody implemented that the client asked for. */
  unknown: string[];
  /** A room the bot is in, with these other members (joined before the bot starts syncing); `encrypted` adds `m.room.encryption`. */
  addRoom(roomId: string, members: string[], name?: string, options?: { encrypted?: boolean }): void;
  /** A session for another user (its own access token and device), for a second client. */
  addUser(userId: string, deviceId?: string): { accessToken: string; deviceId: string };
  /** The E2EE half: keys, to-device messages. */
  keys: FakeKeyServer;
  /** Every event of a room, as the homeserver stores it (encrypted events stay ciphertext). */
  roomEvents(roomId: string): MatrixEventJson[];
  /** Where `eventId` stands in the homeserver's stream (orders events across rooms). */
  eventPosition(eventId: string): number | undefined;
  /** Devices removed by `/logout`. */
  loggedOut: string[];
  /** A room `inviter` made with `members`, to which the bot is invited. */
  invite(roomId: string, inviter: string, members?: string[]): void;
  /** A user sends a room event; returns its event id. */
  userSends(roomId: string, sender: string, content: Json, type?: string): string;
  /** Stores media as a user's client would have uploaded it; returns the `mxc://` URI. */
  addMedia(name: string, mimeType: string, content: string | Buffer): string;
  /** The next `count` requests to `METHOD /path-pattern` fail with `status` (`*` matches one path segment). */
  failNext(route: string, status: number, count?: number, body?: Json): void;
  /** The next `count` /sync requests fail with HTTP 502. */
  failSyncs(count: number): void;
  /** Cuts the bot's /sync long polls waiting for events, as a network drop would. */
  dropSyncs(): number;
  /** /sync long polls currently held open. */
  waitingSyncs(): number;
  /** The first sync, plus every sync answered after a failed or cut one. */
  sessions(): number;
  /** Expires the bot's access token (every request gets 401 M_UNKNOWN_TOKEN). */
  revokeToken(): void;
  close(): Promise<void>;
}
