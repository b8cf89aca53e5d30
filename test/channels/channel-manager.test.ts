import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import type { OutboundMessage } from "../../src/bus/types.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import type { ChannelFactory } from "../../src/channels/channel-manager.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import type { Channel } from "../../src/channels/types.js";
import { ConfigError } from "../../src/core/errors.js";
import { tempHome } from "./helpers/harness.js";

let home: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  home = await tempHome();
});
afterEach(async () => {
  await home.cleanup();
});

class RecordingChannel implements Channel {
  sent: OutboundMessage[] = [];
  stopped = false;
  constructor(
    readonly name: string,
    private readonly failStart = false,
  ) {}
  start(): Promise<void> {
    return this.failStart ? Promise.reject(new Error("cannot connect")) : Promise.resolve();
  }
  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }
  send(message: OutboundMessage): Promise<void> {
    this.sent.push(message);
    return Promise.resolve();
  }
}

describe("ChannelManager", () => {
  it("starts the enabled channels, reports a failing one and keeps the others running", async () => {
    const built = new Map<string, RecordingChannel>();
    const factory: ChannelFactory = ({ name, raw }) => {
      const channel = new RecordingChannel(name, raw.broken === true);
      built.set(name, channel);
      return channel;
    };
    const bus = new InProcessBus();
    const manager = new ChannelManager({
      bus,
      home: home.dir,
      channels: {
        a: { enabled: true, type: "rec" },
        b: { enabled: true, type: "rec", broken: true },
        c: { enabled: false, type: "rec" },
        d: { enabled: true, type: "nope" },
        sendProgress: true,
      },
      factories: { rec: factory },
    });
    const results = await manager.startAll();
    expect(results).toEqual([
      { name: "a", ok: true },
      { name: "b", ok: false, error: "cannot connect" },
      { name: "d", ok: false, error: 'unknown channel type "nope"' },
    ]);
    expect(manager.names()).toEqual(["a"]);
    expect(built.get("b")!.stopped).toBe(true); // a half-started channel is cleaned up
    expect(built.has("c")).toBe(false);

    await bus.publishOutbound({ kind: "typing", channel: "a", chatId: "1" });
    await bus.publishOutbound({ kind: "typing", channel: "b", chatId: "1" });
    expect(built.get("a")!.sent).toHaveLength(1);
    expect(built.get("b")!.sent).toHaveLength(0);

    await manager.stopAll();
    expect(built.get("a")!.stopped).toBe(true);
    await bus.publishOutbound({ kind: "typing", channel: "a", chatId: "1" });
    expect(built.get("a")!.sent).toHaveLength(1);
  });

  it("starts and stops the webhook channels and the leader's channels separately (a cluster worker)", async () => {
    const built = new Map<string, RecordingChannel>();
    const factory: ChannelFactory = ({ name }) => {
      const channel = new RecordingChannel(name);
      built.set(name, channel);
      return channel;
    };
    const manager = new ChannelManager({
      bus: new InProcessBus(),
      home: home.dir,
      channels: {
        hooks: { enabled: true, type: "slack", mode: "http" },
        socket: { enabled: true, type: "slack", mode: "socket" },
        slack: { enabled: true },
        tg: { enabled: true, type: "telegram" },
      },
      factories: { slack: factory, telegram: factory },
    });
    expect(await manager.startAll(undefined, "every-worker")).toEqual([{ name: "hooks", ok: true }]);
    expect(await manager.startAll(undefined, "leader")).toEqual([
      { name: "socket", ok: true },
      { name: "slack", ok: true },
      { name: "tg", ok: true },
    ]);
    // The leader's term ends: the webhook channel keeps serving.
    await manager.stopAll("leader");
    expect(manager.names()).toEqual(["hooks"]);
    expect([...built.values()].filter((c) => c.stopped).map((c) => c.name)).toEqual(["socket", "slack", "tg"]);
    await manager.stopAll("every-worker");
    expect(built.get("hooks")!.stopped).toBe(true);
    expect(manager.names()).toEqual([]);
  });

  it("reports a channel config error naming the key", async () => {
    const manager = new ChannelManager({
      bus: new InProcessBus(),
      home: home.dir,
      channels: { telegram: { enabled: true }, websocket: { enabled: true, port: "many" } },
      factories: defaultChannelFactories(),
    });
    const results = await manager.startAll();
    expect(results).toEqual([
      { name: "telegram", ok: false, error: "channels.telegram.token: expected the bot token" },
      { name: "websocket", ok: false, error: 'channels.websocket.port: expected a port number (1-65535)' },
    ]);
  });

  it("channel config errors are ConfigErrors", async () => {
    const { parseTelegramConfig } = await import("../../src/channels/telegram/config.js");
    expect(() => parseTelegramConfig({ token: "t", mode: "push" })).toThrow(ConfigError);
    expect(() => parseTelegramConfig({ token: "t", mode: "push" })).toThrow(/^channels\.telegram\.mode: expected one of "polling", "webhook"/);
    expect(parseTelegramConfig({ botToken: "b" }).token).toBe("b");
  });
});
