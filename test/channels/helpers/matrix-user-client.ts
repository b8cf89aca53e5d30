/**
 * A Matrix user's own client for end-to-end encryption tests: a second matrix-js-sdk client
 * with Rust crypto, syncing against the fake homeserver under the user's session. It sends
 * through the SDK (which encrypts in encrypted rooms) and collects the room messages it
 * decrypted, so a test sees what the user's app would show.
 */
import * as sdk from "matrix-js-sdk";
import type { MatrixClient, MatrixEvent } from "matrix-js-sdk";
import { decryptAttachment, isEncryptedFile } from "../../../src/channels/matrix/attachment-crypto.js";
import { sdkLogger } from "../../../src/channels/matrix/media.js";
import { silentLogger } from "../../../src/core/logger.js";
import type { FakeMatrix } from "./fake-matrix.js";
import { waitFor } from "./harness.js";

export interface ShownMessage {
  eventId: string;
  sender: string;
  /** The type on the wire (`m.room.encrypted` when it came encrypted). */
  wireType: string;
  /** The decrypted (clear) content. */
  content: Record<string, unknown>;
  /** For an encrypted attachment: the file, downloaded and decrypted. */
  file?: { name: string; content: string };
}

export interface MatrixUserClient {
  client: MatrixClient;
  deviceId: string;
  /** Room messages from others, decrypted, in arrival order. */
  shown: ShownMessage[];
  /** Ids of events that failed to decrypt (at least once). */
  undecryptable: string[];
  /** Ids of the encrypted room messages from others handled so far (shown or undecryptable). */
  seen: Set<string>;
  /** Ids of events redacted since the client started. */
  redacted: Set<string>;
  /** Sends `content` as `m.room.message` through the SDK; the event id. */
  send(roomId: string, content: Record<string, unknown>): Promise<string>;
  /** Waits for a message from `sender` matching `match`. */
  waitShown(what: string, match: (m: ShownMessage) => boolean): Promise<ShownMessage>;
  /** Downloads an `mxc://` URI with the user's token. */
  download(mxc: string): Promise<Uint8Array>;
  stop(): void;
}

export async function startUserClient(fake: FakeMatrix, userId: string): Promise<MatrixUserClient> {
  const { accessToken, deviceId } = fake.addUser(userId);
  // Quiet: the SDK logs its crypto progress at debug level and sync noise at warn.
  (await import("matrix-js-sdk/lib/logger.js")).logger.setLevel("silent");
  const client = new sdk.MatrixClient({ baseUrl: fake.url, accessToken, userId, deviceId, store: new sdk.MemoryStore(), logger: sdkLogger(silentLogger) });
  await client.initRustCrypto({ useIndexedDB: false });
  const wasm = await import("@matrix-org/matrix-sdk-crypto-wasm");
  new wasm.Tracing(wasm.LoggerLevel.Error).turnOff();
  client.getCrypto()!.globalBlacklistUnverifiedDevices = false;
  const shown: ShownMessage[] = [];
  const undecryptable: string[] = [];
  const seen = new Set<string>();
  const redacted = new Set<string>();
  const download = async (mxc: string): Promise<Uint8Array> => {
    const url = client.mxcUrlToHttp(mxc, undefined, undefined, undefined, false, true, true)!;
    const response = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}` } });
    if (!response.ok) throw new Error(`download ${mxc}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  };
  const show = async (event: MatrixEvent): Promise<void> => {
    if (event.getSender() === userId || event.getType() !== "m.room.message" || shown.some((m) => m.eventId === event.getId())) return;
    const message: ShownMessage = { eventId: event.getId()!, sender: event.getSender()!, wireType: event.getWireType(), content: event.getContent() };
    const file = message.content.file;
    if (isEncryptedFile(file)) {
      const name = String(message.content.filename ?? message.content.body ?? "file");
      message.file = { name, content: decryptAttachment(await download(file.url), file).toString("utf8") };
    }
    shown.push(message);
  };
  client.on(sdk.RoomEvent.Timeline, (event: MatrixEvent) => {
    if (event.getType() === "m.room.redaction" && event.event.redacts) redacted.add(event.event.redacts);
    if (!event.isEncrypted()) void show(event);
  });
  // Encrypted events are shown once decrypted, which may be after a room key arrives late.
  // The client re-emits every event's "decrypted"; its typings list only its own events.
  const onDecrypted = client.on.bind(client) as unknown as (name: string, listener: (event: MatrixEvent) => void) => void;
  onDecrypted(sdk.MatrixEventEvent.Decrypted, (event: MatrixEvent) => {
    if (event.isDecryptionFailure()) {
      undecryptable.push(event.getId()!);
      seen.add(event.getId()!);
      return;
    }
    void show(event).finally(() => seen.add(event.getId()!));
  });
  const prepared = new Promise<void>((resolve) => {
    const onSync = (state: string): void => {
      if (state !== "PREPARED") return;
      client.off(sdk.ClientEvent.Sync, onSync);
      resolve();
    };
    client.on(sdk.ClientEvent.Sync, onSync);
  });
  await client.startClient({ initialSyncLimit: 10, lazyLoadMembers: false, threadSupport: false });
  await prepared;
  await waitFor(() => fake.keys.devices(userId).includes(deviceId), `${userId}'s device keys uploaded`);
  return {
    client,
    deviceId,
    shown,
    undecryptable,
    seen,
    redacted,
    async send(roomId, content) {
      const sent = await client.sendMessage(roomId, content as never);
      return sent.event_id;
    },
    waitShown: (what, match) => waitFor(() => shown.find(match), what, 10_000),
    download,
    stop() {
      client.stopClient();
      client.removeAllListeners();
    },
  };
}
