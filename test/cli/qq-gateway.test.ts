/**
 * QQ end to end through the built CLI: `nanobot gateway` with a Python-style `config.json`
 * (snake_case keys) enabling the channel against the loopback fake platform and a scripted
 * fake LLM. `channels list --json` reports the channel connected; a user's direct message gets
 * the acknowledgement and then the model's answer, both as passive replies to it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { QQ_APP_ID, QQ_SECRET, startFakeQQ } from "../channels/helpers/fake-qq.js";
import type { FakeQQ } from "../channels/helpers/fake-qq.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let gw: ChannelGateway | undefined;
let platform: FakeQQ | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await platform?.close();
  platform = undefined;
  await llm?.close();
  llm = undefined;
});

const alice = "ALICEOPENIDAAAAAAAAAAAAAAAAAAAA1";

describe("qq through nanobot gateway", () => {
  it("connects with a Python config.json and answers a direct message with the model's reply", async () => {
    platform = await startFakeQQ();
    llm = await startFakeLLM();
    llm.enqueue({ text: "Tea is ready." });
    gw = await startChannelGateway({
      channel: "qq",
      llm,
      entry: { app_id: QQ_APP_ID, secret: QQ_SECRET, allow_from: [alice], ack_message: "on it", api_base: platform.url, token_url: platform.tokenUrl },
    });
    expect(await gw.listedConnected()).toEqual([{ name: "qq", type: "qq", enabled: true, connected: true }]);

    const messageId = platform.userSays({ author: alice, content: "is the tea ready?", where: "c2c" });
    await waitFor(() => platform!.sent.find((m) => m.content === "Tea is ready."), "the model's answer", 60_000);
    expect(platform.sent.map((m) => [m.chatId, m.content, m.msgId])).toEqual([
      [alice, "on it", messageId],
      [alice, "Tea is ready.", messageId],
    ]);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("is the tea ready?");
  }, 120_000);
});
