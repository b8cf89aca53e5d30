import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { AccessControl } from "../../src/channels/access/access-control.js";
import { InboundGate } from "../../src/channels/access/inbound-gate.js";
import { PairingStore, pairingStorePath } from "../../src/channels/access/pairing-store.js";
import { DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import { registerPairingCommand } from "../../src/channels/pairing-cli.js";
import { parseTelegramConfig } from "../../src/channels/telegram/config.js";
import { TelegramChannel } from "../../src/channels/telegram/telegram-channel.js";
import { createContext } from "../../src/cli/context.js";
import { silentLogger } from "../../src/core/logger.js";
import { BOT_TOKEN, startFakeBotApi } from "./helpers/fake-bot-api.js";
import type { FakeBotApi } from "./helpers/fake-bot-api.js";
import { fakeClock, nextInbound, tempHome } from "./helpers/harness.js";

let home: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  home = await tempHome();
});
afterEach(async () => {
  await home.cleanup();
});

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const nanobotHome = join(home.dir, "nb");
  const ctx = createContext({ stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: { NANOBOT_HOME: nanobotHome }, cwd: home.dir }, "0.0.0");
  const program = new Command("nanobot").exitOverride();
  registerPairingCommand(program, ctx);
  await program.parseAsync(["node", "nanobot", ...args]);
  return { code: ctx.exitCode, out };
}

describe("nanobot pairing (CLI)", () => {
  it("lists, approves and revokes through $NANOBOT_HOME/pairing.json", async () => {
    const store = new PairingStore({ path: pairingStorePath(join(home.dir, "nb")) });
    const { code } = await store.requestCode({ channel: "telegram", senderId: "5", username: "eve" });
    expect((await cli(["pairing", "list"])).out).toContain(`${code}  telegram:5 (@eve)`);
    expect(await cli(["pairing", "approve", code])).toEqual({ code: 0, out: "approved telegram:5 (@eve)\n" });
    expect(await store.isApproved("telegram", { id: "5" })).toBe(true);
    expect(await cli(["pairing", "approve", code])).toMatchObject({ code: 1 });
    expect(await cli(["pairing", "revoke", "@eve"])).toEqual({ code: 0, out: "revoked telegram:5 (@eve)\n" });
    expect(await store.isApproved("telegram", { id: "5" })).toBe(false);
  });
});

describe("telegram webhook mode", () => {
  let fake: FakeBotApi;
  let channel: TelegramChannel;
  afterEach(async () => {
    await channel.stop();
    await fake.close();
  });

  it("sets the webhook on start and feeds posted updates to the bus, checking the secret", async () => {
    fake = await startFakeBotApi();
    const bus = new InProcessBus();
    channel = new TelegramChannel({
      bus,
      gate: new InboundGate({ bus, access: new AccessControl({ channel: "telegram", allowFrom: ["42"] }) }),
      delivery: new DeliveryQueue(),
      home: home.dir,
      logger: silentLogger,
      clock: fakeClock(),
      config: parseTelegramConfig({ token: BOT_TOKEN, apiRoot: fake.url, mode: "webhook", webhookUrl: "https://bot.example/tg", webhookSecret: "hook-secret" }),
    });
    const handler = channel.webhookHandler();
    const update = { update_id: 1, message: { message_id: 5, date: 0, chat: { id: 42, type: "private" }, from: { id: 42, is_bot: false, first_name: "A" }, text: "via webhook" } };
    const post = (secret: string) =>
      handler(new Request("http://gateway/telegram", { method: "POST", headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret }, body: JSON.stringify(update) }));

    expect((await post("hook-secret")).status).toBe(503); // not started yet
    await channel.start(new AbortController().signal);
    expect(fake.callsOf("setWebhook")[0]!.params).toMatchObject({ url: "https://bot.example/tg", secret_token: "hook-secret" });
    expect(fake.callsOf("getUpdates")).toHaveLength(0);
    expect((await post("wrong")).status).toBe(401);
    expect(bus.inboundSize()).toBe(0);
    expect((await post("hook-secret")).status).toBe(200);
    expect((await nextInbound(bus)).content).toBe("via webhook");
  });
});
