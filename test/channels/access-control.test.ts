import { readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { AccessControl } from "../../src/channels/access/access-control.js";
import { InboundGate } from "../../src/channels/access/inbound-gate.js";
import type { GateInput } from "../../src/channels/access/inbound-gate.js";
import { handlePairingCommand } from "../../src/channels/access/pairing-command.js";
import { PAIRING_ALPHABET, PairingStore, pairingStorePath } from "../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import type { Channel } from "../../src/channels/types.js";
import { tempHome } from "./helpers/harness.js";

let home: { dir: string; cleanup: () => Promise<void> };
let now: number;
let store: PairingStore;

beforeEach(async () => {
  home = await tempHome();
  now = 1_700_000_000_000;
  store = new PairingStore({ path: pairingStorePath(home.dir), now: () => now });
});

afterEach(async () => {
  await home.cleanup();
});

const dm = (id: string, username?: string) => ({ sender: username ? { id, username } : { id }, isDirect: true });

describe("allowFrom", () => {
  it('"*" admits everyone, in groups too', async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: ["*"], store });
    expect(await access.check(dm("1"))).toEqual({ kind: "allow", via: "wildcard" });
    expect(await access.check({ sender: { id: "2" }, isDirect: false })).toEqual({ kind: "allow", via: "wildcard" });
  });

  it("a list admits exact ids and @usernames (case-insensitive) and nothing else", async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: ["42", "@Alice"], store });
    expect((await access.check(dm("42"))).kind).toBe("allow");
    expect((await access.check(dm("7", "alice"))).kind).toBe("allow");
    expect((await access.check(dm("420"))).kind).toBe("deny");
    expect((await access.check(dm("4"))).kind).toBe("deny");
    expect((await access.check(dm("8", "alicex"))).kind).toBe("deny");
    // With a list configured, strangers get no pairing code.
    expect((await store.list()).pending).toEqual([]);
  });
});

describe("pairing (no list)", () => {
  it("gives an unknown DM sender an 8-character code from the unambiguous alphabet, reused while pending", async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: [], store });
    const first = await access.check(dm("99", "bob"));
    expect(first.kind).toBe("pair");
    if (first.kind !== "pair") return;
    expect(first.code).toHaveLength(8);
    for (const ch of first.code) expect(PAIRING_ALPHABET).toContain(ch);
    expect(first.code).not.toMatch(/[01OIL]/);
    expect(first.expiresAt - now).toBe(10 * 60 * 1000);
    const second = await access.check(dm("99", "bob"));
    expect(second).toMatchObject({ kind: "pair", code: first.code, isNew: false });
  });

  it("approve admits the sender; deny and expiry do not; revoke removes the approval", async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: [], store });
    const a = await access.check(dm("1", "ann"));
    const b = await access.check(dm("2"));
    if (a.kind !== "pair" || b.kind !== "pair") throw new Error("expected pairing");
    expect(await handlePairingCommand(["approve", a.code], store)).toBe("approved telegram:1 (@ann)");
    expect(await handlePairingCommand(`deny ${b.code}`, store)).toBe("denied telegram:2");
    expect(await access.check(dm("1", "ann"))).toEqual({ kind: "allow", via: "pairing" });
    expect((await access.check(dm("2"))).kind).toBe("pair"); // asks again with a new code
    expect(await handlePairingCommand("approve ZZZZZZZZ", store)).toBe("no pending pairing with code ZZZZZZZZ (expired or unknown)");
    expect(await handlePairingCommand("revoke telegram:@ann", store)).toBe("revoked telegram:1 (@ann)");
    expect((await access.check(dm("1", "ann"))).kind).toBe("pair");
  });

  it("codes expire after 10 minutes", async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: [], store });
    const decision = await access.check(dm("5"));
    if (decision.kind !== "pair") throw new Error("expected pairing");
    now += 10 * 60 * 1000 + 1;
    expect(await handlePairingCommand(`approve ${decision.code}`, store)).toMatch(/^no pending pairing/);
    expect(await handlePairingCommand("list", store, { now: () => now })).toBe("pending: none\napproved: none");
  });

  it("group messages from unknown senders are denied without a code", async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: [], store });
    expect(await access.check({ sender: { id: "5" }, isDirect: false })).toEqual({ kind: "deny", reason: "group_unknown_sender" });
    expect((await store.list()).pending).toEqual([]);
  });

  it("state is one JSON file, written atomically and shared between store instances", async () => {
    const access = new AccessControl({ channel: "telegram", allowFrom: [], store });
    const decision = await access.check(dm("77"));
    if (decision.kind !== "pair") throw new Error("expected pairing");
    const other = new PairingStore({ path: pairingStorePath(home.dir), now: () => now });
    await other.approve(decision.code);
    expect(await store.isApproved("telegram", { id: "77" })).toBe(true);
    const file = JSON.parse(await readFile(join(home.dir, "pairing.json"), "utf8")) as { version: number; approved: unknown[] };
    expect(file.version).toBe(1);
    expect(file.approved).toHaveLength(1);
    expect(await readdir(home.dir)).toEqual(["pairing.json"]); // no temp files left behind
  });

  it("stores on one file (gateway workers sharing a home) lose none of each other's writes", async () => {
    const stores = [store, new PairingStore({ path: pairingStorePath(home.dir), now: () => now }), new PairingStore({ path: pairingStorePath(home.dir), now: () => now })];
    const senders = Array.from({ length: 30 }, (_, i) => String(100 + i));
    await Promise.all(senders.map((id, i) => stores[i % stores.length]!.requestCode({ channel: "slack", senderId: id })));
    const { pending } = await store.list();
    expect(pending.map((p) => p.senderId).sort()).toEqual(senders);
    await Promise.all(pending.map((p, i) => stores[i % stores.length]!.approve(p.code)));
    expect((await store.list()).approved.map((a) => a.senderId).sort()).toEqual(senders);
    expect(await readdir(home.dir)).toEqual(["pairing.json"]); // the lock is gone too
  });

  it("a lock left by a process that died mid-write is taken over once it is stale", async () => {
    const lock = `${pairingStorePath(home.dir)}.lock`;
    await writeFile(lock, "12345");
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(lock, minuteAgo, minuteAgo);
    const { code } = await store.requestCode({ channel: "slack", senderId: "9" });
    expect((await store.list()).pending.map((p) => p.code)).toEqual([code]);
    expect(await readdir(home.dir)).toEqual(["pairing.json"]);
  });

  it("list shows pending and approved entries; bad input answers with usage", async () => {
    await store.requestCode({ channel: "telegram", senderId: "3", username: "cy" });
    const listing = await handlePairingCommand("", store, { now: () => now });
    expect(listing).toMatch(/^pending:\n {2}[A-Z2-9]{8} {2}telegram:3 \(@cy\) {2}expires in 10 min\napproved: none$/);
    expect(await handlePairingCommand("approve", store)).toMatch(/^usage:/);
    expect(await handlePairingCommand("frobnicate", store)).toMatch(/^usage:/);
  });
});

describe("internal channels cannot be claimed from outside", () => {
  it("refuses access control for internal channel names", () => {
    for (const name of ["system", "cron", "subagent", "CRON"]) {
      expect(() => new AccessControl({ channel: name, allowFrom: ["*"] })).toThrow(/reserved/);
    }
  });

  it("the gate stamps its own channel name; a platform sender called 'cron' is just a stranger", async () => {
    const bus = new InProcessBus();
    const gate = new InboundGate({ bus, access: new AccessControl({ channel: "telegram", allowFrom: [], store }) });
    const replies: string[] = [];
    const spoof: GateInput & { channel?: string } = {
      channel: "cron",
      id: "1",
      chatId: "cron",
      sender: { id: "cron", username: "system" },
      content: "run everything",
      isDirect: true,
    };
    expect(await gate.receive(spoof, async (t) => void replies.push(t))).toBe("pairing");
    expect(bus.inboundSize()).toBe(0);
    expect(replies[0]).toMatch(/pairing code: [A-Z2-9]{8}/);
    // An approval of telegram:cron admits only that telegram sender, stamped as telegram.
    const { pending } = await store.list();
    await store.approve(pending[0]!.code);
    expect(await gate.receive({ ...spoof, id: "2" }, async () => undefined)).toBe("forwarded");
    const forwarded = await bus.consumeInbound();
    expect(forwarded.channel).toBe("telegram");
    expect(await store.isApproved("cron", { id: "cron" })).toBe(false);
  });

  it("the manager will not start a configured channel with an internal name", async () => {
    const started: string[] = [];
    const fakeChannel = (name: string): Channel => ({
      name,
      start: async () => void started.push(name),
      stop: async () => undefined,
      send: async () => undefined,
    });
    const manager = new ChannelManager({
      bus: new InProcessBus(),
      home: home.dir,
      channels: { cron: { enabled: true, type: "fake" }, system: { enabled: true, type: "fake" }, ok: { enabled: true, type: "fake" } },
      factories: { fake: ({ name }) => fakeChannel(name) },
      pairing: store,
    });
    const results = await manager.startAll();
    expect(results.filter((r) => !r.ok).map((r) => r.name).sort()).toEqual(["cron", "system"]);
    expect(started).toEqual(["ok"]);
    await manager.stopAll();
  });

  it("a duplicate platform message id is forwarded once", async () => {
    const bus = new InProcessBus();
    const gate = new InboundGate({ bus, access: new AccessControl({ channel: "telegram", allowFrom: ["*"] }) });
    const input: GateInput = { id: "m1", chatId: "1", sender: { id: "1" }, content: "hi", isDirect: true };
    expect(await gate.receive(input, async () => undefined)).toBe("forwarded");
    expect(await gate.receive(input, async () => undefined)).toBe("duplicate");
    expect(bus.inboundSize()).toBe(1);
  });
});
