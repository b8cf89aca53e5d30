/**
 * Category 5 (channels) — WebSocket clients that share the one channel token are still kept
 * apart: each gets a server-issued, signed client id, chats are scoped to it, so a client that
 * names another client's chat id (or its public id) gets its own empty chat, never the other's
 * history or replies. Forged or guessed client ids are refused; a reconnect with the issued id
 * resumes the chat. Runs the real channel, gate, AgentLoop and the fake LLM.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { AccessControl } from "../../src/channels/access/access-control.js";
import { InboundGate } from "../../src/channels/access/inbound-gate.js";
import { systemClock } from "../../src/channels/clock.js";
import { DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import { parseWebSocketConfig } from "../../src/channels/websocket/config.js";
import { WebSocketChannel } from "../../src/channels/websocket/websocket-channel.js";
import { silentLogger } from "../../src/core/logger.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { namedAgents, startRuntime, wireMessages, wireText } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

const TOKEN = "ws-test-SECRET-token-0001";
let fake: FakeLLM;
let fx: RuntimeFixture;
let loop: AgentLoop;
let bus: InProcessBus;
let channel: WebSocketChannel;
let channelHome: string;
const sockets: WebSocket[] = [];
const figures = { crossReads: 0, forgedRefused: 0, resumed: 0 };

beforeEach(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake, {
    extra: namedAgents("You are OTHER, the operator agent."),
  });
  channelHome = await mkdtemp(join(tmpdir(), "nanobot-ws-sec-"));
  bus = new InProcessBus();
  loop = new AgentLoop({ runtime: fx.runtime, bus });
  loop.start();
  channel = await startChannel();
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await channel.stop();
  await loop.stop();
  await fx.close();
  await fake.close();
  await rm(channelHome, { recursive: true, force: true });
});
afterAll(() => {
  console.log(
    `security (websocket clients): ${figures.crossReads} cross-client reads attempted, 0 succeeded; ${figures.forgedRefused} forged client ids refused; ${figures.resumed} resumed`,
  );
});

async function startChannel(): Promise<WebSocketChannel> {
  const started = new WebSocketChannel({
    bus,
    gate: new InboundGate({ bus, access: new AccessControl({ channel: "websocket", allowFrom: ["*"] }) }),
    delivery: new DeliveryQueue(),
    home: channelHome,
    logger: silentLogger,
    clock: systemClock,
    config: { ...parseWebSocketConfig({ token: TOKEN }), port: 0 },
  });
  bus.subscribeOutbound((m) => started.send(m), { channel: "websocket" });
  await started.start();
  return started;
}

interface Client {
  frames: Array<Record<string, unknown>>;
  ready: Record<string, unknown>;
  say(content: string, chatId?: string): void;
  reply(count: number): Promise<string>;
}

async function connect(query: string): Promise<Client> {
  const socket = new WebSocket(`ws://127.0.0.1:${channel.address()!.port}/ws?token=${TOKEN}${query}`);
  sockets.push(socket);
  const frames: Array<Record<string, unknown>> = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const ready = await until(() => frames.find((f) => f.type === "ready"), "ready");
  return {
    frames,
    ready,
    say: (content, chatId) => socket.send(JSON.stringify({ type: "message", content, ...(chatId ? { chatId } : {}) })),
    reply: async (count) => {
      const messages = await until(() => {
        const got = frames.filter((f) => f.type === "message");
        return got.length >= count ? got : undefined;
      }, `${count} replies`);
      return String(messages[count - 1]?.content);
    },
  };
}

function refusedStatus(query: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${channel.address()!.port}/ws?token=${TOKEN}${query}`);
    socket.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.on("open", () => reject(new Error("connection was accepted")));
    socket.on("error", () => undefined);
  });
}

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Every text the provider was sent in one request. */
const sentTexts = (index: number): string => wireMessages(fake.requests[index]).map(wireText).join("\n");

describe("WebSocket clients sharing the token", () => {
  it("cannot see each other's chats or messages, whatever chat id they name", async () => {
    const alice = await connect("&chatId=room");
    fake.enqueue({ text: "noted, Alice" });
    alice.say("my bank PIN is 4711");
    expect(await alice.reply(1)).toBe("noted, Alice");

    const alicePublic = String(alice.ready.clientId).split(".")[0]!;
    const mallory = await connect("&chatId=room");
    expect(mallory.ready.clientId).not.toBe(alice.ready.clientId);
    // The same label, the scoped bus id, and Alice's public id as a label: each is Mallory's own empty chat.
    const attempts = ["room", `${alicePublic}:room`, alicePublic];
    for (const [i, chatId] of attempts.entries()) {
      fake.enqueue({ text: `nothing to see ${i}` });
      mallory.say("what is my bank PIN?", chatId);
      expect(await mallory.reply(i + 1)).toBe(`nothing to see ${i}`);
      expect(sentTexts(i + 1)).not.toContain("4711");
      figures.crossReads++;
    }
    // Alice got no frame of Mallory's turns, Mallory none of Alice's.
    expect(alice.frames.filter((f) => f.type === "message").map((f) => f.content)).toEqual(["noted, Alice"]);
    expect(mallory.frames.some((f) => JSON.stringify(f).includes("4711") || JSON.stringify(f).includes("Alice"))).toBe(false);
    // Alice's chat still holds only her conversation.
    fake.enqueue({ text: "your PIN is 4711" });
    alice.say("what is my PIN?");
    expect(await alice.reply(2)).toBe("your PIN is 4711");
    expect(sentTexts(4)).toContain("my bank PIN is 4711");
    expect(sentTexts(4)).not.toContain("what is my bank PIN?");
  });

  it("a forged or guessed client id is refused", async () => {
    const alice = await connect("&chatId=room");
    const credential = String(alice.ready.clientId);
    const [id, signature] = credential.split(".") as [string, string];
    const forged = [id, `${id}.${signature.split("").reverse().join("")}`, "alice", `${id}.${"x".repeat(43)}`, `${"A".repeat(22)}.${signature}`];
    for (const value of forged) {
      expect(await refusedStatus(`&clientId=${encodeURIComponent(value)}&chatId=room`), value).toBe(403);
      figures.forgedRefused++;
    }
    expect(fake.requests).toHaveLength(0);
  });

  it("a reconnect with the issued id resumes the chat, across a channel restart", async () => {
    const alice = await connect("&chatId=diary");
    fake.enqueue({ text: "written down" });
    alice.say("today I planted tomatoes");
    expect(await alice.reply(1)).toBe("written down");
    const credential = String(alice.ready.clientId);
    for (const socket of sockets.splice(0)) socket.terminate();
    await channel.stop();
    channel = await startChannel();

    const back = await connect(`&chatId=diary&clientId=${credential}`);
    expect(back.ready).toEqual({ type: "ready", chatId: "diary", clientId: credential });
    fake.enqueue({ text: "tomatoes, you said" });
    back.say("what did I plant?");
    expect(await back.reply(1)).toBe("tomatoes, you said");
    expect(sentTexts(1)).toContain("today I planted tomatoes");
    figures.resumed++;
  });

  it('a frame carrying agent: "other" is answered by the default agent', async () => {
    const client = await connect("");
    await until(() => client.ready, "ready");
    fake.enqueue({ text: "plain nanobot" });
    const socket = sockets.at(-1)!;
    socket.send(JSON.stringify({ type: "message", content: "who are you?", agent: "other", metadata: { agent: "other" } }));
    expect(await client.reply(1)).toBe("plain nanobot");
    expect(wireText(wireMessages(fake.requests[0])[0]!)).not.toContain("You are OTHER");
  });
});
