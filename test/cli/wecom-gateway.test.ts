/**
 * WeCom end to end: the built CLI's `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.wecom` against the fake WeCom long connection
 * and the scripted fake LLM. A user's direct message gets the model's answer as a stream reply on
 * the message's frame, and `nanobot channels list --json` reports the channel connected.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WECOM_BOT_ID, WECOM_SECRET, startFakeWecom } from "../channels/helpers/fake-wecom.js";
import type { FakeWecom } from "../channels/helpers/fake-wecom.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let llm: FakeLLM;
let wecom: FakeWecom;
let gw: ChannelGateway | undefined;

beforeEach(async () => {
  llm = await startFakeLLM();
  wecom = await startFakeWecom();
});

afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await wecom.close();
  await llm.close();
});

const alice = { id: "alice.zhang", username: "alice" };

describe("wecom through the gateway", () => {
  it("answers a direct message with the model's reply and lists the channel connected", async () => {
    llm.enqueue({ text: "hello from the model" });
    // The Python nanobot's keys, as its config.json spells them; wsUrl points at the fake.
    gw = await startChannelGateway({ channel: "wecom", llm, entry: { botId: WECOM_BOT_ID, secret: WECOM_SECRET, allowFrom: [alice.id], wsUrl: wecom.wsUrl } });
    await waitFor(() => wecom.liveSockets() > 0, "the subscribed connection", 30_000);

    wecom.pushMessage({ from: alice, text: "hi bot" });
    const answer = await waitFor(() => wecom.messages.find((m) => m.text === "hello from the model"), "the answer", 30_000);
    expect(answer).toMatchObject({ chatId: alice.id, via: "reply", msgtype: "stream", finished: true });
    expect(JSON.stringify(llm.requests.at(-1)?.body ?? {})).toContain("hi bot");
    expect(await gw.listedConnected()).toEqual([{ name: "wecom", type: "wecom", enabled: true, connected: true }]);
  }, 120_000);
});
