import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { stat } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { AccessControl } from "../../src/channels/access/access-control.js";
import { InboundGate } from "../../src/channels/access/inbound-gate.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { parseWebSocketConfig } from "../../src/channels/websocket/config.js";
import { clientSecretPath } from "../../src/channels/websocket/client-ids.js";
import { WebSocketChannel } from "../../src/channels/websocket/websocket-channel.js";
import { ConfigError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/logger.js";
import { fakeClock, nextInbound, tempHome, waitFor } from "./helpers/harness.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

let home: string;
beforeEach(async () => {
  const temp = await tempHome();
  home = temp.dir;
  cleanups.push(temp.cleanup);
});

function build(config: Record<string, unknown> = {}, server?: Server, name = "websocket"): { channel: WebSocketChannel; bus: InProcessBus } {
  const bus = new InProcessBus();
  const gate = new InboundGate({ bus, access: new AccessControl({ channel: name, allowFrom: ["*"] }) });
  const channel = new WebSocketChannel({
    bus,
    gate,
    name,
    delivery: new DeliveryQueue(),
    home,
    logger: silentLogger,
    clock: fakeClock(),
    config: { ...parseWebSocketConfig(config), port: 0 },
    server,
  });
  bus.subscribeOutbound((m) => channel.send(m), { channel: name });
  cleanups.push(() => channel.stop());
  return { channel, bus };
}

interface Client {
  socket: WebSocket;
  frames: Array<Record<string, unknown>>;
  next(type: string): Promise<Record<string, unknown>>;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const socket = new WebSocket(url, { headers });
  const frames: Array<Record<string, unknown>> = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  cleanups.push(async () => {
    socket.close();
    await new Promise((resolve) => (socket.readyState === WebSocket.CLOSED ? resolve(undefined) : socket.once("close", resolve)));
  });
  let read = 0;
  return {
    socket,
    frames,
    async next(type) {
      return waitFor(() => {
        const i = frames.findIndex((f, index) => index >= read && f.type === type);
        if (i < 0) return undefined;
        read = i + 1;
        return frames[i];
      }, `a ${type} frame`);
    },
  };
}

/** The HTTP status a refused upgrade answered with. */
function refusedStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.on("open", () => reject(new Error("connection was accepted")));
    socket.on("error", () => undefined);
  });
}

function wsUrl(channel: WebSocketChannel, query = ""): string {
  return `ws://127.0.0.1:${channel.address()!.port}/ws${query}`;
}

describe("websocket: token auth", () => {
  it("refuses a missing or wrong token with 401 and accepts ?token= and Bearer", async () => {
    const { channel } = build({ token: "s3cret" });
    await channel.start();
    expect(await refusedStatus(wsUrl(channel))).toBe(401);
    expect(await refusedStatus(wsUrl(channel, "?token=nope"))).toBe(401);
    expect(await refusedStatus(wsUrl(channel), { authorization: "Bearer nope" })).toBe(401);
    const viaQuery = await connect(wsUrl(channel, "?token=s3cret"));
    expect((await viaQuery.next("ready")).chatId).toEqual(expect.any(String));
    const viaHeader = await connect(wsUrl(channel), { authorization: "Bearer s3cret" });
    await viaHeader.next("ready");
  });

  it("refuses to start on a wildcard host without a token", async () => {
    const { channel } = build({ host: "0.0.0.0" });
    await expect(channel.start()).rejects.toThrow(ConfigError);
    await expect(channel.start()).rejects.toThrow(/channels\.websocket\.token: a token is required/);
    const home = await tempHome();
    cleanups.push(home.cleanup);
    const manager = new ChannelManager({
      bus: new InProcessBus(),
      home: home.dir,
      channels: { websocket: { enabled: true, host: "::" } },
      factories: defaultChannelFactories(),
    });
    const [result] = await manager.startAll();
    expect(result).toMatchObject({ name: "websocket", ok: false, error: expect.stringMatching(/token is required/) });
  });

  it("starts on a wildcard host when a token is set", async () => {
    const { channel } = build({ host: "0.0.0.0", token: "t" });
    await channel.start();
    expect(channel.address()!.address).toBe("0.0.0.0");
  });
});

describe("websocket: frames", () => {
  it("a message frame reaches the bus; outbound kinds come back as frames for that chat", async () => {
    const { channel, bus } = build();
    await channel.start();
    const client = await connect(wsUrl(channel));
    const ready = await client.next("ready");
    expect(ready.chatId).toBe("default");
    client.socket.send(JSON.stringify({ type: "message", content: "hello" }));
    const inbound = await nextInbound(bus);
    const publicId = publicPart(ready.clientId);
    // On the bus the chat is scoped to the client; the sender is the client's public id.
    expect(inbound).toMatchObject({ channel: "websocket", chatId: `${publicId}:default`, senderId: publicId, content: "hello" });

    const chatId = "default";
    const scoped = inbound.chatId;
    await bus.publishOutbound({ kind: "typing", channel: "websocket", chatId: scoped });
    await bus.publishOutbound({ kind: "delta", channel: "websocket", chatId: scoped, streamId: "s", delta: "Hi" });
    await bus.publishOutbound({ kind: "stream_end", channel: "websocket", chatId: scoped, streamId: "s", id: "r1", content: "Hi!" });
    await bus.publishOutbound({ kind: "message", channel: "websocket", chatId: scoped, id: "r2", content: "again" });
    await bus.publishOutbound({ kind: "message", channel: "websocket", chatId: scoped, id: "r2", content: "again" });
    expect(await client.next("typing")).toEqual({ type: "typing", chatId });
    expect(await client.next("delta")).toEqual({ type: "delta", chatId, streamId: "s", delta: "Hi" });
    expect(await client.next("stream_end")).toEqual({ type: "stream_end", chatId, streamId: "s", id: "r1", content: "Hi!" });
    expect(await client.next("message")).toEqual({ type: "message", chatId, id: "r2", content: "again" });
    await bus.publishOutbound({ kind: "typing", channel: "websocket", chatId: scoped });
    await client.next("typing");
    expect(client.frames.filter((f) => f.type === "message")).toHaveLength(1);
  });

  it("keeps a chat per connection: ?chatId=, then the chatId of a frame, each scoped to its client", async () => {
    const { channel, bus } = build();
    await channel.start();
    const one = await connect(wsUrl(channel, "?chatId=room-1"));
    const two = await connect(wsUrl(channel, "?chatId=room-2"));
    const oneId = publicPart((await one.next("ready")).clientId);
    const twoId = publicPart((await two.next("ready")).clientId);
    expect(oneId).not.toBe(twoId);
    await bus.publishOutbound({ kind: "message", channel: "websocket", chatId: `${oneId}:room-1`, id: "a", content: "for one" });
    expect(await one.next("message")).toEqual({ type: "message", chatId: "room-1", id: "a", content: "for one" });
    // Two names one's chat label: it gets a room-1 of its own, not one's.
    two.socket.send(JSON.stringify({ type: "message", content: "switch", chatId: "room-1" }));
    expect((await nextInbound(bus)).chatId).toBe(`${twoId}:room-1`);
    await bus.publishOutbound({ kind: "message", channel: "websocket", chatId: `${oneId}:room-1`, id: "b", content: "only for one" });
    await bus.publishOutbound({ kind: "message", channel: "websocket", chatId: `${twoId}:room-1`, id: "c", content: "only for two" });
    expect((await one.next("message")).content).toBe("only for one");
    expect((await two.next("message")).content).toBe("only for two");
    expect(one.frames.filter((f) => f.type === "message").map((f) => f.content)).toEqual(["for one", "only for one"]);
    expect(two.frames.filter((f) => f.type === "message").map((f) => f.content)).toEqual(["only for two"]);
  });

  it("answers bad frames with an error frame and forwards nothing", async () => {
    const { channel, bus } = build();
    await channel.start();
    const client = await connect(wsUrl(channel));
    await client.next("ready");
    client.socket.send("not json");
    expect((await client.next("error")).error).toBe("frame is not JSON");
    client.socket.send(JSON.stringify({ type: "message", content: "x", chatId: "bad id!" }));
    expect((await client.next("error")).error).toMatch(/^chatId must be/);
    client.socket.send(JSON.stringify({ type: "subscribe" }));
    expect((await client.next("error")).error).toBe('unknown frame type "subscribe"');
    expect(bus.inboundSize()).toBe(0);
    expect(await refusedStatus(wsUrl(channel, "?chatId=no%20spaces"))).toBe(400);
  });
});

describe("websocket: sharing an http.Server", () => {
  it("upgrades on its path and leaves ordinary requests to the server", async () => {
    const server = createServer((_req, res) => res.end("gateway"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { channel, bus } = build({ path: "/ws" }, server);
    await channel.start();
    const port = (server.address() as AddressInfo).port;
    expect(await (await fetch(`http://127.0.0.1:${port}/health`)).text()).toBe("gateway");
    const client = await connect(`ws://127.0.0.1:${port}/ws`);
    await client.next("ready");
    client.socket.send(JSON.stringify({ type: "message", content: "via gateway" }));
    expect((await nextInbound(bus)).content).toBe("via gateway");
    expect(channel.address()).toBeUndefined();
  });
});

describe("websocket: what a web page can send to the channel's own listener", () => {
  it("refuses a foreign Origin or Host with 403 even with the token; its own origin and no Origin connect", async () => {
    const { channel } = build({ token: "t" });
    await channel.start();
    const port = channel.address()!.port;
    expect(await refusedStatus(wsUrl(channel, "?token=t"), { origin: "http://evil.example" })).toBe(403);
    expect(await refusedStatus(wsUrl(channel, "?token=t"), { origin: "null" })).toBe(403);
    expect(await refusedStatus(wsUrl(channel, "?token=t"), { host: `evil.example:${port}` })).toBe(403);
    await (await connect(wsUrl(channel, "?token=t"), { origin: `http://127.0.0.1:${port}` })).next("ready");
    await (await connect(wsUrl(channel, "?token=t"))).next("ready");
  });

  it("channels.<name>.allowedOrigins / allowedHosts admit the listed ones only", async () => {
    const { channel } = build({ token: "t", allowedOrigins: ["https://app.example.com"], allowedHosts: ["chat.example.com"] });
    await channel.start();
    const port = channel.address()!.port;
    await (await connect(wsUrl(channel, "?token=t"), { origin: "https://app.example.com", host: `chat.example.com:${port}` })).next("ready");
    expect(await refusedStatus(wsUrl(channel, "?token=t"), { origin: "https://other.example.com" })).toBe(403);
    expect(() => parseWebSocketConfig({ allowedOrigins: ["*"] })).toThrow(/channels\.websocket\.allowedOrigins\.0: expected an origin/);
    expect(() => parseWebSocketConfig({ path: "ws" })).toThrow(/channels\.websocket\.path: expected a path starting with "\/"/);
  });

  it("answers upgrades to other paths with 404 and closes them (exact match: /ws/, //ws, /WS are not /ws)", async () => {
    const { channel } = build();
    await channel.start();
    for (const path of ["/ws/", "//ws", "/WS", "/other"]) {
      const status = await refusedStatus(`ws://127.0.0.1:${channel.address()!.port}${path}`);
      expect(status, path).toBe(404);
    }
  });
});

/** The public id inside an issued client id (`<id>.<signature>`). */
function publicPart(clientId: unknown): string {
  const [id, signature] = String(clientId).split(".");
  expect(id).toMatch(/^[\w-]{22}$/);
  expect(signature).toMatch(/^[\w-]{43}$/);
  return id!;
}

describe("websocket: issued client ids", () => {
  it("refuses client ids the server did not issue: made up, public part only, forged or tampered signatures, another channel's", async () => {
    const { channel } = build({ token: "t" });
    await channel.start();
    const other = build({ token: "t" }, undefined, "websocket-b").channel;
    await other.start();
    const issued = String((await (await connect(wsUrl(channel, "?token=t"))).next("ready")).clientId);
    const fromOther = String((await (await connect(wsUrl(other, "?token=t"))).next("ready")).clientId);
    const [id, signature] = issued.split(".") as [string, string];
    const flipped = `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`;
    for (const forged of ["browser-1", id, `${id}.${"A".repeat(43)}`, `${id}.${flipped}`, `${"B".repeat(22)}.${signature}`, fromOther, `${issued}x`]) {
      expect(await refusedStatus(wsUrl(channel, `?token=t&clientId=${encodeURIComponent(forged)}`)), forged).toBe(403);
    }
    // The token is still checked first.
    expect(await refusedStatus(wsUrl(channel, `?clientId=${issued}`))).toBe(401);
  });

  it("a reconnect with the issued id resumes the same chat, also after a restart of the channel", async () => {
    const first = build();
    await first.channel.start();
    const client = await connect(wsUrl(first.channel, "?chatId=notes"));
    const credential = String((await client.next("ready")).clientId);
    client.socket.send(JSON.stringify({ type: "message", content: "before" }));
    const before = await nextInbound(first.bus);
    client.socket.close();
    await first.channel.stop();

    const second = build();
    await second.channel.start();
    const again = await connect(wsUrl(second.channel, `?chatId=notes&clientId=${credential}`));
    expect(await again.next("ready")).toEqual({ type: "ready", chatId: "notes", clientId: credential });
    again.socket.send(JSON.stringify({ type: "message", content: "after" }));
    const after = await nextInbound(second.bus);
    expect({ chatId: after.chatId, senderId: after.senderId }).toEqual({ chatId: before.chatId, senderId: before.senderId });
    await second.bus.publishOutbound({ kind: "message", channel: "websocket", chatId: after.chatId, id: "r", content: "welcome back" });
    expect((await again.next("message")).content).toBe("welcome back");
    // The secret behind the ids is the owner's alone.
    expect((await stat(clientSecretPath(home, "websocket"))).mode & 0o777).toBe(0o600);
  });

  it("answers a frame over maxPayload with an error frame and keeps the connection", async () => {
    const { channel, bus } = build({ maxPayload: 1024 });
    await channel.start();
    const client = await connect(wsUrl(channel));
    await client.next("ready");
    client.socket.send(JSON.stringify({ type: "message", content: "x".repeat(1500) }));
    expect((await client.next("error")).error).toMatch(/^message too large: \d+ bytes; this server accepts up to 1024 bytes per frame \(channels\.websocket\.maxPayload\)$/);
    expect(bus.inboundSize()).toBe(0);
    client.socket.send(JSON.stringify({ type: "message", content: "small" }));
    expect((await nextInbound(bus)).content).toBe("small");
  });
});
