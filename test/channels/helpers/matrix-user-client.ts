/**
 * A Matrix user's own client for end-to-end encryption tests: a second matrix-js-sdk client
 * with Rust crypto, syncing against the fake homeserver under the user's session. It sends
 * through the SDK (which encrypts in encrypted rooms) and collects the room messages it
 * decrypted, so a test sees what the user's app would show.
 */
import * as sdk from "matrix-js-sdk";
import type { MatrixClient, MatrixEvent } from "matrix-js-sdk";
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
}

export interface MatrixUserClient {
  client: MatrixClient;
  deviceId: string;
  /** Room messages from others, decrypted, in arrival order. */
  shown: ShownMessage[];
  /** Ids of events that failed to decrypt (at least once). */
  undecryptable: string[];
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
  const show = (event: MatrixEvent): void => {
    if (event.getSender() === userId || event.getType() !== "m.room.message" || shown.some((m) => m.eventId === event.getId())) return;
    shown.push({ eventId: event.getId()!, sender: event.getSender()!, wireType: event.getWireType(), content: event.getContent() });
  };
  client.on(sdk.RoomEvent.Timeline, (event: MatrixEvent) => {
    if (!event.isEncrypted()) show(event);
  });
  // Encrypted events are shown once decrypted, which may be after a room key arrives late.
  client.on(sdk.MatrixEventEvent.Decrypted, (event: MatrixEvent) => {
    if (event.isDecryptionFailure()) undecryptable.push(event.getId()!);
    else show(event);
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
    async send(roomId, content) {
      const sent = await client.sendEvent(roomId, "m.room.message" as Parameters<MatrixClient["sendEvent"]>[1], content as never);
      return sent.event_id;
    },
    waitShown: (what, match) => waitFor(() => shown.find(match), what, 10_000),
    async download(mxc) {
      const url = client.mxcUrlToHttp(mxc, undefined, undefined, undefined, false, true, true)!;
      const response = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}` } });
      if (!response.ok) throw new Error(`download ${mxc}: HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    },
    stop() {
      client.stopClient();
      client.removeAllListeners();
    },
  };
}
