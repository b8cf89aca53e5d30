/**
 * The channel kit's Matrix adapter with encrypted direct chats: the bot runs with end-to-end
 * encryption, and Alice and Mallory each have their own matrix-js-sdk client with Rust crypto.
 * They write their direct messages through it (encrypted), and what the bot "sent" there is what
 * their clients decrypted — the homeserver holds only ciphertext for those rooms. The group room
 * stays unencrypted, read from the homeserver as in `matrix-platform.ts`.
 */
import type { OutboundMessage } from "../../../src/bus/types.js";
import { encryptAttachment } from "../../../src/channels/matrix/attachment-crypto.js";
import { MATRIX_BOT } from "../helpers/fake-matrix.js";
import type { Json } from "../helpers/fake-matrix.js";
import { waitFor } from "../helpers/harness.js";
import { startUserClient } from "../helpers/matrix-user-client.js";
import type { MatrixUserClient, ShownMessage } from "../helpers/matrix-user-client.js";
import type { KitPlatform, KitSent, KitUser } from "./kit-types.js";
import { MATRIX_ALICE, MATRIX_MALLORY, matrixDmRoom, matrixPlatform, startMatrix } from "./matrix-platform.js";
import type { MatrixSession, StartMatrixOptions } from "./matrix-platform.js";

function relation(m: ShownMessage): Json | undefined {
  const r = m.content["m.relates_to"];
  return typeof r === "object" && r !== null ? (r as Json) : undefined;
}

/** The bot's messages in one user's encrypted DM, as that user's client shows them. */
function shownSent(client: MatrixUserClient, roomId: string, position: (id: string) => number): Array<KitSent & { at: number }> {
  const fromBot = client.shown.filter((m) => m.sender === MATRIX_BOT.id && !client.redacted.has(m.eventId));
  const edits = fromBot.filter((m) => relation(m)?.rel_type === "m.replace");
  return fromBot
    .filter((m) => relation(m)?.rel_type !== "m.replace")
    .map((m) => {
      const mine = edits.filter((e) => relation(e)?.event_id === m.eventId).sort((a, b) => position(a.eventId) - position(b.eventId));
      const bodies = mine.map((e) => String((e.content["m.new_content"] as Json | undefined)?.body ?? ""));
      const replyTo = (relation(m)?.["m.in_reply_to"] as Json | undefined)?.event_id;
      return {
        at: position(m.eventId),
        chatId: roomId,
        text: m.file ? "" : (bodies.at(-1) ?? String(m.content.body ?? "")),
        edits: bodies,
        files: m.file ? [m.file] : [],
        ...(typeof replyTo === "string" ? { replyTo } : {}),
      };
    });
}

export async function startEncryptedMatrix(config: Record<string, unknown>, options: StartMatrixOptions = {}): Promise<MatrixSession> {
  const base = await startMatrix(config, { ...options, encryptedDms: true });
  const { fake } = base;
  const clients = new Map<string, MatrixUserClient>();
  try {
    await waitFor(() => fake.keys.devices(MATRIX_BOT.id).length > 0, "the bot's device keys");
    // Both users' devices exist before the bot first encrypts, so room keys are shared with them.
    for (const user of [MATRIX_ALICE, MATRIX_MALLORY]) clients.set(user.id, await startUserClient(fake, user.id));
  } catch (error) {
    for (const c of clients.values()) c.stop();
    await base.close();
    throw error;
  }
  const clientOf = (user: KitUser): MatrixUserClient => clients.get(user.id)!;
  const position = (id: string): number => fake.eventPosition(id) ?? Number.MAX_SAFE_INTEGER;

  /** Waits until each user's client has handled every encrypted event the bot stored in their DM. */
  async function settle(): Promise<void> {
    for (const [userId, client] of clients) {
      const roomId = matrixDmRoom({ id: userId, username: userId });
      const stored = (): string[] => fake.roomEvents(roomId).filter((e) => e.sender === MATRIX_BOT.id && e.type === "m.room.encrypted").map((e) => e.event_id);
      await waitFor(() => stored().every((id) => client.seen.has(id)), `${userId}'s client decrypting the bot's messages`, 10_000);
      if (client.undecryptable.length > 0) throw new Error(`${userId} could not decrypt ${client.undecryptable.join(", ")}`);
      const plain = fake.roomEvents(roomId).filter((e) => e.sender === MATRIX_BOT.id && e.type === "m.room.message");
      if (plain.length > 0) throw new Error(`the bot sent plaintext into the encrypted room ${roomId}: ${JSON.stringify(plain[0]!.content)}`);
    }
  }

  // The kit reads `sent()` right after a publish resolves: here that is once the users' devices decrypted it.
  const publish = base.bus.publishOutbound.bind(base.bus);
  base.bus.publishOutbound = async (message: OutboundMessage): Promise<void> => {
    await publish(message);
    await settle();
  };

  return {
    ...base,
    async userSays(user, text, where, attachment) {
      if (where.chat !== "dm") return base.userSays(user, text, where, attachment);
      let content: Json = { msgtype: "m.text", body: text };
      if (attachment) {
        const { ciphertext, file } = encryptAttachment(Buffer.from(attachment.content));
        const url = fake.addMedia("", "application/octet-stream", ciphertext);
        content = {
          msgtype: attachment.mimeType.startsWith("image/") ? "m.image" : "m.file",
          body: text || attachment.name,
          filename: attachment.name,
          info: { mimetype: attachment.mimeType, size: Buffer.byteLength(attachment.content) },
          file: { ...file, url },
        };
      }
      return clientOf(user).send(matrixDmRoom(user), content);
    },
    sent() {
      const group = base
        .sent()
        .filter((m) => m.chatId === base.groupChat)
        .map((m) => ({ ...m, at: 0 }));
      const dms = [...clients].flatMap(([userId, client]) => shownSent(client, matrixDmRoom({ id: userId, username: userId }), position));
      return [...group, ...dms].sort((a, b) => a.at - b.at).map(({ at: _at, ...m }) => m);
    },
    async close() {
      for (const c of clients.values()) c.stop();
      await base.close();
    },
  };
}

export const matrixEncryptedPlatform: KitPlatform = {
  ...matrixPlatform,
  channel: "matrix",
  start: (config, options) => startEncryptedMatrix(config, options),
};
