/** The channel kit's adapter for Matrix: the real matrix-js-sdk-based channel over the fake homeserver. */
import { InProcessBus } from "../../../src/bus/in-process-bus.js";
import type { BusError } from "../../../src/bus/types.js";
import { PairingStore, pairingStorePath } from "../../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../../src/channels/channel-manager.js";
import { defaultChannelFactories } from "../../../src/channels/factories.js";
import type { Logger } from "../../../src/core/logger.js";
import { TYPING_REFRESH_MS } from "../../../src/channels/matrix/matrix-channel.js";
import { MATRIX_BOT, MATRIX_GROUP_ROOM, MATRIX_TOKEN, startFakeMatrix } from "../helpers/fake-matrix.js";
import type { FakeMatrix, FakeMatrixOptions, Json } from "../helpers/fake-matrix.js";
import { fakeClock, recordingSleep, tempHome, waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import type { KitPlatform, KitSession, KitUser } from "./kit-types.js";

export const MATRIX_ALICE: KitUser = { id: "@alice:fake.test", username: "@alice:fake.test" };
export const MATRIX_MALLORY: KitUser = { id: "@mallory:fake.test", username: "@mallory:fake.test" };
export const MATRIX_BOB = "@bob:fake.test";

/** Each user's direct chat with the bot: a room of two. */
export function matrixDmRoom(user: KitUser): string {
  return `!dm-${user.id.slice(1).split(":")[0]}:fake.test`;
}

export interface MatrixSession extends KitSession {
  fake: FakeMatrix;
  manager: ChannelManager;
  clock: FakeClock;
}

export interface StartMatrixOptions {
  switches?: Record<string, unknown>;
  fake?: FakeMatrixOptions;
  /** Prepares the homeserver (rooms, history) before the channel's first sync. */
  before?: (fake: FakeMatrix) => void;
  /** Leave out the access token (for password-login tests). */
  noToken?: boolean;
  /** An existing home (the kept session lives there). */
  home?: string;
  /** Where the channel's log lines go (silent when unset). */
  logger?: Logger;
  /** Make the users' direct chats with the bot encrypted rooms. */
  encryptedDms?: boolean;
}

export async function startMatrix(config: Record<string, unknown> = {}, options: StartMatrixOptions = {}): Promise<MatrixSession> {
  const fake = await startFakeMatrix(options.fake);
  for (const user of [MATRIX_ALICE, MATRIX_MALLORY]) fake.addRoom(matrixDmRoom(user), [user.id, MATRIX_BOT.id], undefined, { encrypted: options.encryptedDms === true });
  fake.addRoom(MATRIX_GROUP_ROOM, [MATRIX_ALICE.id, MATRIX_BOT.id, MATRIX_MALLORY.id, MATRIX_BOB], "Team room");
  options.before?.(fake);
  const temp = options.home ? undefined : await tempHome();
  const homeDir = options.home ?? temp!.dir;
  const bus = new InProcessBus();
  const busErrors: BusError[] = [];
  bus.onError((e) => busErrors.push(e));
  const store = new PairingStore({ path: pairingStorePath(homeDir) });
  const clock = fakeClock(1_000_000);
  const { sleep, waits } = recordingSleep();
  const entry = { enabled: true, homeserver: fake.url, userId: MATRIX_BOT.id, ...(options.noToken ? {} : { accessToken: MATRIX_TOKEN }), ...config };
  const manager = new ChannelManager({
    bus,
    home: homeDir,
    channels: { ...options.switches, matrix: entry },
    factories: defaultChannelFactories(),
    pairing: store,
    sleep,
    clock,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const [result] = await manager.startAll();
  if (!result?.ok) {
    await manager.stopAll();
    await fake.close();
    await temp?.cleanup();
    throw new Error(`matrix did not start: ${result?.error}`);
  }
  // The bot's message in the group that "reply" addresses.
  let botMessage: string | undefined;

  return {
    fake,
    manager,
    bus,
    store,
    clock,
    waits,
    busErrors,
    home: homeDir,
    groupChat: MATRIX_GROUP_ROOM,
    dmChat: matrixDmRoom,
    async userSays(user, text, where, attachment) {
      const roomId = where.chat === "dm" ? matrixDmRoom(user) : MATRIX_GROUP_ROOM;
      let content: Json = { msgtype: "m.text", body: text };
      if (where.chat === "group" && where.address === "mention") {
        content = {
          msgtype: "m.text",
          body: `${MATRIX_BOT.displayName}: ${text}`,
          format: "org.matrix.custom.html",
          formatted_body: `<a href="https://matrix.to/#/${MATRIX_BOT.id}">${MATRIX_BOT.displayName}</a>: ${text}`,
          "m.mentions": { user_ids: [MATRIX_BOT.id] },
        };
      }
      if (where.chat === "group" && where.address === "reply") {
        if (!botMessage) {
          await bus.publishOutbound({ kind: "message", channel: "matrix", chatId: MATRIX_GROUP_ROOM, id: `seed-${Date.now()}`, content: "earlier answer" });
          botMessage = fake.messages.at(-1)!.eventId;
        }
        content = { msgtype: "m.text", body: text, "m.relates_to": { "m.in_reply_to": { event_id: botMessage } } };
      }
      if (attachment) {
        const url = fake.addMedia(attachment.name, attachment.mimeType, attachment.content);
        content = {
          ...content,
          msgtype: attachment.mimeType.startsWith("image/") ? "m.image" : "m.file",
          filename: attachment.name,
          url,
          info: { mimetype: attachment.mimeType, size: Buffer.byteLength(attachment.content) },
        };
      }
      return fake.userSends(roomId, user.id, content);
    },
    sent() {
      return fake.messages
        .filter((m) => m.body !== "earlier answer" && !m.redacted)
        .map((m) => ({
          chatId: m.roomId,
          text: m.file ? "" : m.body,
          edits: m.edits,
          files: m.file ? [{ name: m.file.name, content: m.file.content }] : [],
          ...(m.replyTo ? { replyTo: m.replyTo } : {}),
        }));
    },
    failNextSends(count) {
      fake.failNext("PUT /_matrix/client/v3/rooms/*/send/*/*", 502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.waitingSyncs() > 0, "a waiting /sync long poll");
      if (fake.dropSyncs() === 0) throw new Error("no /sync long poll was cut");
    },
    connections: () => fake.sessions(),
    typing: () => [...fake.typing],
    async close() {
      await manager.stopAll();
      await fake.close();
      await temp?.cleanup();
    },
  };
}

export const matrixPlatform: KitPlatform = {
  channel: "matrix",
  textLimit: 8000,
  edits: true,
  typing: true,
  typingRefreshMs: TYPING_REFRESH_MS,
  users: { alice: MATRIX_ALICE, mallory: MATRIX_MALLORY },
  // Matrix threads every reply that names the asking event; nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startMatrix(config, options),
};
