/**
 * DingTalk end to end: the built CLI's `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.dingtalk` against the fake DingTalk platform
 * and the scripted fake LLM. A user's direct message gets the model's answer through the robot
 * send API, and `nanobot channels list --json` reports the channel connected.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET, startFakeDingTalk } from "../channels/helpers/fake-dingtalk.js";
import type { FakeDingTalk } from "../channels/helpers/fake-dingtalk.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let llm: FakeLLM;
let dingtalk: FakeDingTalk;
let gw: ChannelGateway | undefined;

beforeEach(async () => {
  llm = await startFakeLLM();
  dingtalk = await startFakeDingTalk();
});

afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await dingtalk.close();
  await llm.close();
});

const alice = { id: "0211223344556677", username: "alice" };

describe("dingtalk through the gateway", () => {
  it("answers a direct message with the model's reply and lists the channel connected", async () => {
    llm.enqueue({ text: "hello from the model" });
    // The Python nanobot's keys, as its config.json spells them; apiRoot/oapiRoot point at the fake.
    gw = await startChannelGateway({
      channel: "dingtalk",
      llm,
      entry: { clientId: DINGTALK_CLIENT_ID, clientSecret: DINGTALK_CLIENT_SECRET, allowFrom: [alice.id], apiRoot: dingtalk.url, oapiRoot: dingtalk.url },
    });
    await waitFor(() => dingtalk.liveSockets() > 0, "the stream connection", 30_000);

    dingtalk.pushMessage({ from: alice, text: "hi bot" });
    const answer = await waitFor(() => dingtalk.messages.find((m) => m.text === "hello from the model"), "the answer", 30_000);
    expect(answer).toMatchObject({ chatId: alice.id, via: "batchSend", msgKey: "sampleMarkdown" });
    expect(JSON.stringify(llm.requests.at(-1)?.body ?? {})).toContain("hi bot");
    expect(await gw.listedConnected()).toEqual([{ name: "dingtalk", type: "dingtalk", enabled: true, connected: true }]);
  }, 120_000);
});
