/**
 * Feishu end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` (the Python nanobot's `channels.feishu` keys and defaults, plus
 * `apiRoot` pointing at the loopback Feishu fake), the scripted fake LLM answering. A user's
 * direct message reaches the model and its answer reaches the user's chat; `nanobot channels
 * list --json` asks the running gateway and reports Feishu connected.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FEISHU_APP_ID, FEISHU_APP_SECRET, startFakeFeishu } from "../channels/helpers/fake-feishu.js";
import type { FakeFeishu } from "../channels/helpers/fake-feishu.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let gw: ChannelGateway | undefined;
let feishu: FakeFeishu | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gw?.close();
  await feishu?.close();
  await llm?.close();
  gw = feishu = llm = undefined;
});

const alice = { openId: "ou_alice00000000000000000000000001", name: "alice" };

describe("feishu through the gateway", () => {
  it("answers a direct message with the model's reply, and channels list shows feishu connected", async () => {
    llm = await startFakeLLM();
    feishu = await startFakeFeishu();
    // The Python nanobot's feishu section as `nanobot channels login feishu` leaves it.
    const pythonFeishu = {
      instanceId: "default",
      name: "nanobot",
      identityKey: "",
      appId: FEISHU_APP_ID,
      appSecret: FEISHU_APP_SECRET,
      encryptKey: "",
      verificationToken: "",
      allowFrom: [alice.openId],
      reactEmoji: "THUMBSUP",
      doneEmoji: null,
      toolHintPrefix: "\u{1F527}",
      groupPolicy: "mention",
      replyToMessage: false,
      streaming: true,
      domain: "feishu",
      topicIsolation: true,
      apiRoot: feishu.url,
    };
    gw = await startChannelGateway({ channel: "feishu", llm, entry: pythonFeishu, config: { channels: { sendProgress: false, sendToolHints: false } } });
    await waitFor(() => feishu!.liveSockets() > 0, "the long connection", 30_000);

    llm.enqueue({ text: "Hello from the model, via Feishu" });
    const asked = feishu.dispatchMessage({ sender: alice, text: "hi nanobot" });
    const answer = await waitFor(() => feishu!.messages.find((m) => m.text === "Hello from the model, via Feishu"), "the answer", 30_000);
    expect(answer.chatId).toBe(alice.openId);
    const body = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(body.messages.at(-1))).toContain("hi nanobot");
    // The asking message carried the THUMBSUP reaction while the model worked.
    await waitFor(() => feishu!.reactions.some((r) => r.action === "remove" && r.messageId === asked), "the reaction removed", 10_000);
    expect(await gw.listedConnected()).toEqual([{ name: "feishu", type: "feishu", enabled: true, connected: true }]);
  }, 120_000);
});
