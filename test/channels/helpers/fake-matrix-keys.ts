/**
 * The fake homeserver's end-to-end encryption half, from the client-server spec (v1.11,
 * "End-to-End Encryption" and "Send-to-Device messaging"): device and one-time key uploads
 * (`/keys/upload`, refusing a one-time key id reused with other content, as Synapse does),
 * `/keys/query`, `/keys/claim` (one-time key first, then the fallback key), `/keys/changes`,
 * `/sendToDevice` (idempotent per transaction), and what `/sync` carries for them:
 * `to_device` events, `device_lists.changed`, one-time key counts and unused fallback key types.
 * The homeserver only ever holds public keys and ciphertext.
 */

export type Json = Record<string, unknown>;

export interface Caller {
  userId: string;
  deviceId: string;
  token: string;
}

export type KeysReply = { status: number; body: Json };

export interface KeysSyncPart {
  to_device: { events: Json[] };
  device_lists: { changed: string[]; left: string[] };
  device_one_time_keys_count: Record<string, number>;
  device_unused_fallback_key_types: string[];
}

interface Device {
  keys?: Json;
  oneTime: Map<string, Json | string>;
  fallback: Map<string, Json | string>;
  fallbackUsed: boolean;
}

interface ToDevice {
  pos: number;
  userId: string;
  deviceId: string;
  event: Json;
}

export interface FakeKeyServer {
  /** Answers an E2EE route (`route` after `/_matrix/client/v3`), undefined when it is not one. */
  handle(method: string, route: string, body: Json, caller: Caller): KeysReply | undefined;
  /** What `/sync` since `since` tells `caller`; `shares(user)` is whether they share a room. */
  syncPart(caller: Caller, since: number | undefined, shares: (userId: string) => boolean): { part: KeysSyncPart; news: boolean };
  /** Every to-device message sent, with its type and sender (contents are Olm ciphertext). */
  toDeviceLog: Array<{ type: string; sender: string; to: string }>;
  /** Holds back to-device messages for `userId` (a slow federation link) until `releaseToDevice`. */
  holdToDevice(userId: string): void;
  releaseToDevice(): void;
  /** Forgets a device (its keys and its queue), as `/logout` does. */
  removeDevice(userId: string, deviceId: string): void;
  /** The devices of `userId` that have uploaded keys. */
  devices(userId: string): string[];
}

/**
 * `tick()` advances the homeserver's stream position and returns it; `wake()` lets held
 * /sync long polls look again (called once the new entry is recorded).
 */
export function createKeyServer(tick: () => number, wake: () => void): FakeKeyServer {
  const devices = new Map<string, Map<string, Device>>();
  const changes: Array<{ pos: number; userId: string }> = [];
  const inbox: ToDevice[] = [];
  const txns = new Set<string>();
  const toDeviceLog: FakeKeyServer["toDeviceLog"] = [];
  const holding = new Set<string>();
  const parked: Array<Omit<ToDevice, "pos">> = [];

  const device = (userId: string, deviceId: string): Device => {
    let byUser = devices.get(userId);
    if (!byUser) devices.set(userId, (byUser = new Map()));
    let d = byUser.get(deviceId);
    if (!d) byUser.set(deviceId, (d = { oneTime: new Map(), fallback: new Map(), fallbackUsed: false }));
    return d;
  };

  const counts = (d: Device): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const id of d.oneTime.keys()) {
      const algorithm = id.split(":")[0]!;
      out[algorithm] = (out[algorithm] ?? 0) + 1;
    }
    return out;
  };

  function upload(body: Json, caller: Caller): KeysReply {
    const d = device(caller.userId, caller.deviceId);
    const oneTime = (body.one_time_keys ?? {}) as Json;
    for (const [id, key] of Object.entries(oneTime)) {
      const existing = d.oneTime.get(id);
      if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(key)) {
        return { status: 400, body: { errcode: "M_INVALID_PARAM", error: `One time key ${id} already exists` } };
      }
    }
    for (const [id, key] of Object.entries(oneTime)) d.oneTime.set(id, key as Json);
    const fallback = (body.fallback_keys ?? body["org.matrix.msc2732.fallback_keys"]) as Json | undefined;
    if (fallback) {
      d.fallback = new Map(Object.entries(fallback) as Array<[string, Json]>);
      d.fallbackUsed = false;
    }
    const keys = body.device_keys as Json | undefined;
    if (keys) {
      if (keys.user_id !== caller.userId || keys.device_id !== caller.deviceId) {
        return { status: 400, body: { errcode: "M_INVALID_PARAM", error: "device_keys belong to another device" } };
      }
      if (JSON.stringify(d.keys) !== JSON.stringify(keys)) {
        d.keys = keys;
        changes.push({ pos: tick(), userId: caller.userId });
        wake();
      }
    }
    return { status: 200, body: { one_time_key_counts: counts(d) } };
  }

  function query(body: Json): KeysReply {
    const wanted = (body.device_keys ?? {}) as Record<string, string[]>;
    const out: Record<string, Json> = {};
    for (const [userId, ids] of Object.entries(wanted)) {
      const byUser = devices.get(userId) ?? new Map<string, Device>();
      const entry: Json = {};
      for (const [deviceId, d] of byUser) {
        if (d.keys && (ids.length === 0 || ids.includes(deviceId))) entry[deviceId] = d.keys;
      }
      out[userId] = entry;
    }
    return { status: 200, body: { device_keys: out, failures: {}, master_keys: {}, self_signing_keys: {}, user_signing_keys: {} } };
  }

  function claim(body: Json): KeysReply {
    const wanted = (body.one_time_keys ?? {}) as Record<string, Record<string, string>>;
    const out: Record<string, Record<string, Json>> = {};
    for (const [userId, byDevice] of Object.entries(wanted)) {
      for (const [deviceId, algorithm] of Object.entries(byDevice)) {
        const d = devices.get(userId)?.get(deviceId);
        if (!d) continue;
        const pick = (keys: Map<string, Json | string>): [string, Json | string] | undefined => [...keys].find(([id]) => id.startsWith(`${algorithm}:`));
        const oneTime = pick(d.oneTime);
        const chosen = oneTime ?? pick(d.fallback);
        if (!chosen) continue;
        if (oneTime) d.oneTime.delete(oneTime[0]);
        else d.fallbackUsed = true;
        (out[userId] ??= {})[deviceId] = { [chosen[0]]: chosen[1] };
      }
    }
    return { status: 200, body: { one_time_keys: out, failures: {} } };
  }

  function sendToDevice(type: string, txnId: string, body: Json, caller: Caller): KeysReply {
    const txn = `${caller.token} ${txnId}`;
    if (txns.has(txn)) return { status: 200, body: {} };
    txns.add(txn);
    const messages = (body.messages ?? {}) as Record<string, Record<string, Json>>;
    for (const [userId, byDevice] of Object.entries(messages)) {
      for (const [target, content] of Object.entries(byDevice)) {
        const targets = target === "*" ? [...(devices.get(userId)?.keys() ?? [])] : [target];
        for (const deviceId of targets) {
          const message = { userId, deviceId, event: { type, sender: caller.userId, content } };
          if (holding.has(userId)) parked.push(message);
          else inbox.push({ pos: tick(), ...message });
          toDeviceLog.push({ type, sender: caller.userId, to: `${userId}/${deviceId}` });
        }
      }
    }
    wake();
    return { status: 200, body: {} };
  }

  return {
    toDeviceLog,
    handle(method, route, body, caller) {
      const parts = route.split("/").slice(1).map(decodeURIComponent);
      if (method === "POST" && route === "/keys/upload") return upload(body, caller);
      if (method === "POST" && route === "/keys/query") return query(body);
      if (method === "POST" && route === "/keys/claim") return claim(body);
      if (method === "GET" && route === "/keys/changes") {
        const from = Number(String(body.from ?? "s0").slice(1));
        return { status: 200, body: { changed: [...new Set(changes.filter((c) => c.pos > from).map((c) => c.userId))], left: [] } };
      }
      // No cross-signing on the fake: signature uploads are accepted and not kept.
      if (method === "POST" && route === "/keys/signatures/upload") return { status: 200, body: { failures: {} } };
      if (method === "PUT" && parts[0] === "sendToDevice" && parts.length === 3) return sendToDevice(parts[1]!, parts[2]!, body, caller);
      // No server-side key backup on this homeserver.
      if (route.startsWith("/room_keys/")) return { status: 404, body: { errcode: "M_NOT_FOUND", error: "No current backup version" } };
      return undefined;
    },
    syncPart(caller, since, shares) {
      const from = since ?? 0;
      const events = inbox.filter((m) => m.pos > from && m.userId === caller.userId && m.deviceId === caller.deviceId).map((m) => m.event);
      const changed = [...new Set(changes.filter((c) => c.pos > from && (c.userId === caller.userId || shares(c.userId))).map((c) => c.userId))];
      const d = device(caller.userId, caller.deviceId);
      const part: KeysSyncPart = {
        to_device: { events },
        device_lists: { changed, left: [] },
        device_one_time_keys_count: counts(d),
        device_unused_fallback_key_types: d.fallback.size > 0 && !d.fallbackUsed ? [...new Set([...d.fallback.keys()].map((id) => id.split(":")[0]!))] : [],
      };
      return { part, news: since !== undefined && (events.length > 0 || changed.length > 0) };
    },
    holdToDevice(userId) {
      holding.add(userId);
    },
    releaseToDevice() {
      holding.clear();
      for (const message of parked.splice(0)) inbox.push({ pos: tick(), ...message });
      wake();
    },
    removeDevice(userId, deviceId) {
      devices.get(userId)?.delete(deviceId);
      changes.push({ pos: tick(), userId });
      wake();
    },
    devices: (userId) => [...(devices.get(userId)?.entries() ?? [])].filter(([, d]) => d.keys).map(([id]) => id),
  };
}
