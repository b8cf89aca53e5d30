/**
 * End-to-end encryption for the Matrix channel (`e2eeEnabled`), on matrix-js-sdk's Rust crypto
 * (`@matrix-org/matrix-sdk-crypto-wasm`, which runs on Node 20). The SDK uploads the device's
 * identity and one-time keys, tracks the room members' devices, shares Megolm room keys over
 * to-device messages and decrypts incoming `m.room.encrypted` events during /sync; this module
 * starts it, encrypts the bot's outgoing room events and reports what could not be decrypted.
 *
 * The Rust store is IndexedDB, which Node does not have: the keys live in memory and are made
 * anew on every start. A password login therefore gets a new device each start (see the
 * channel's login). An access token's device keeps its id: when it already published keys (an
 * earlier run, or the Element session the token was copied from), crypto is not started —
 * new keys would be refused by the homeserver or break that other session's encryption.
 */
import type * as MatrixSdk from "matrix-js-sdk";
import type { MatrixClient, MatrixEvent, Method, Room } from "matrix-js-sdk";
import { errorMessage } from "../../core/errors.js";
import type { RoomContent } from "./send.js";

export interface MatrixE2ee {
  /** Whether the room has `m.room.encryption` (then everything sent there is encrypted). */
  isEncrypted(roomId: string): Promise<boolean>;
  /** A room event's content encrypted for the room's devices (room keys shared first as needed). */
  encrypt(roomId: string, type: string, content: RoomContent): Promise<RoomContent>;
  /** Waits for the SDK's decryption of `event`: the failure reason when it could not be decrypted. */
  decrypt(event: MatrixEvent): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** The device's public identity keys (what a user compares when verifying by hand). */
  identity(): Promise<{ deviceId: string; ed25519: string; curve25519: string }>;
  /** Calls `listener` when `event` is decrypted later (its room key arrived after it). */
  onLateDecryption(event: MatrixEvent, listener: () => void): void;
}

/** The part of the SDK's (internal) crypto backend that encrypts one event, as `sendEvent` uses it. */
interface EventEncryptor {
  encryptEvent(event: MatrixEvent, room: Room): Promise<void>;
}

type Sdk = typeof MatrixSdk;

/** Keys `deviceId` already published, from an earlier run whose private keys are gone. */
async function publishedKeys(client: MatrixClient, userId: string, deviceId: string): Promise<boolean> {
  const reply = await client.http.authedRequest<{ device_keys?: Record<string, Record<string, unknown>> }>("POST" as Method, "/keys/query", undefined, {
    device_keys: { [userId]: [deviceId] },
  });
  return reply.device_keys?.[userId]?.[deviceId] !== undefined;
}

export async function startE2ee(sdk: Sdk, client: MatrixClient): Promise<MatrixE2ee> {
  const userId = client.getSafeUserId();
  const deviceId = client.getDeviceId();
  if (!deviceId) throw new Error("end-to-end encryption needs the session's device id, and the homeserver did not tell it");
  if (await publishedKeys(client, userId, deviceId)) {
    throw new Error(
      `device ${deviceId} already has published keys (from an earlier run, or from the client the access token was copied from); nanobot keeps its crypto keys in memory only and cannot take them over — use "password" login (a fresh device each start) or an access token of a new device`,
    );
  }
  await client.initRustCrypto({ useIndexedDB: false });
  // The SDK turns the Rust side's tracing on at debug level, straight to the console; the
  // channel logs what matters itself (the few lines of the set-up itself cannot be held back).
  const wasm = await import("@matrix-org/matrix-sdk-crypto-wasm");
  new wasm.Tracing(wasm.LoggerLevel.Error).turnOff();
  const crypto = client.getCrypto();
  const backend = (client as unknown as { cryptoBackend?: EventEncryptor }).cryptoBackend;
  if (!crypto || !backend) throw new Error("matrix-js-sdk did not set up its crypto backend");
  // Nobody can verify the bot's device (no cross-signing here): room keys go to unverified devices too.
  crypto.globalBlacklistUnverifiedDevices = false;

  return {
    isEncrypted: (roomId) => crypto.isEncryptionEnabledInRoom(roomId),
    async encrypt(roomId, type, content) {
      const room = client.getRoom(roomId);
      if (!room) throw new Error(`matrix: cannot encrypt for unknown room ${roomId}`);
      const event = new sdk.MatrixEvent({ type, content, room_id: roomId, sender: userId });
      await backend.encryptEvent(event, room);
      return event.getWireContent() as RoomContent;
    },
    async decrypt(event) {
      try {
        await client.decryptEventIfNeeded(event);
      } catch (error) {
        return { ok: false, reason: errorMessage(error) };
      }
      if (!event.isDecryptionFailure()) return { ok: true };
      return { ok: false, reason: event.decryptionFailureReason ?? "unknown reason" };
    },
    onLateDecryption(event, listener) {
      event.once(sdk.MatrixEventEvent.Decrypted, () => {
        if (!event.isDecryptionFailure()) listener();
      });
    },
    async identity() {
      const keys = await crypto.getOwnDeviceKeys();
      return { deviceId, ...keys };
    },
  };
}
