/**
 * WeChat end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.weixin` against the fake iLink API and a
 * scripted fake LLM. A user's message is answered under its context token, `nanobot channels
 * list --json` reports the channel connected, and a Python key nanobot cannot fully honour
 * (`replyProgressMessages: true`) is warned about at start-up. Needs `npm run build`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startChannelGateway } from "../cli/channel-gateway.js";
import type { ChannelGateway } from "../cli/channel-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { WEIXIN_TOKEN, startFakeWeixin } from "./helpers/fake-weixin.js";
import type { FakeWeixin } from "./helpers/fake-weixin.js";
import { waitFor } from "./helpers/harness.js";

let llm: FakeLLM | undefined;
let weixin: FakeWeixin | undefined;
let gw: ChannelGateway | undefined;

afterEach(async () => {
  await gw?.close();
  await weixin?.close();
  await llm?.close();
  gw = weixin = llm = undefined;
});

describe("weixin through the gateway", () => {
  it("answers a user's message with the model's reply and shows as connected", async () => {
    llm = await startFakeLLM();
    weixin = await startFakeWeixin();
    const alice = "o9cq80-alice@im.wechat";
    // As the Python nanobot writes it (camelCase keys), with its WeChat defaults spelled out.
    gw = await startChannelGateway({
      channel: "weixin",
      llm,
      config: { channels: { sendProgress: false } },
      entry: {
        token: WEIXIN_TOKEN,
        allowFrom: [alice],
        baseUrl: weixin.url,
        cdnBaseUrl: weixin.cdnUrl,
        routeTag: null,
        stateDir: "",
        pollTimeout: 35,
        sendProgress: false,
        sendToolHints: false,
        replyProgressMessages: true,
        contextMessageBudget: 8,
        streaming: true,
        blockStreaming: false,
        blockStreamingMinChars: 1200,
        blockStreamingMaxMessages: 3,
      },
    });
    await gw.gateway.waitFor(/channels\.weixin\.replyProgressMessages: nanobot sends no structured tool-call cards/, 10_000);

    llm.enqueue({ text: "Hello Alice, from the model." });
    const asked = weixin.userSays({ from: alice, text: "hi bot" });
    const answer = await waitFor(() => weixin!.sent.find((m) => m.text === "Hello Alice, from the model."), "the answer in the chat", 60_000);
    expect(answer).toMatchObject({ to: alice, replyTo: asked });
    const prompt = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(prompt.messages.at(-1))).toContain("hi bot");
    expect(await gw.listedConnected()).toEqual([{ name: "weixin", type: "weixin", enabled: true, connected: true }]);
  }, 120_000);
});
