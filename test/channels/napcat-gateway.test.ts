/**
 * NapCat end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.napcat` against the fake NapCat and a scripted
 * fake LLM. A friend's private message is answered (quoting it), `nanobot channels list --json`
 * reports the channel connected, and the key nanobot cannot honour (`streaming: true`) is warned
 * about at start-up. Needs `npm run build`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startChannelGateway } from "../cli/channel-gateway.js";
import type { ChannelGateway } from "../cli/channel-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { NAPCAT_TOKEN, startFakeNapcat } from "./helpers/fake-napcat.js";
import type { FakeNapcat } from "./helpers/fake-napcat.js";
import { waitFor } from "./helpers/harness.js";

let llm: FakeLLM | undefined;
let napcat: FakeNapcat | undefined;
let gw: ChannelGateway | undefined;

afterEach(async () => {
  await gw?.close();
  await napcat?.close();
  await llm?.close();
  gw = napcat = llm = undefined;
});

describe("napcat through the gateway", () => {
  it("answers a private message with the model's reply and shows as connected", async () => {
    llm = await startFakeLLM();
    napcat = await startFakeNapcat();
    const alice = 20001;
    // As the Python nanobot writes it (camelCase keys), with its NapCat defaults spelled out.
    gw = await startChannelGateway({
      channel: "napcat",
      llm,
      config: { channels: { sendProgress: false } },
      entry: {
        wsUrl: napcat.url,
        accessToken: NAPCAT_TOKEN,
        allowFrom: [String(alice)],
        groupPolicy: "mention",
        groupPolicyOverrides: {},
        welcomeNewMembers: true,
        maxImageBytes: 20971520,
        streaming: true,
      },
    });
    await gw.gateway.waitFor(/channels\.napcat\.streaming cannot show a reply as it grows/, 10_000);
    await waitFor(() => napcat!.liveSockets() > 0, "the gateway's NapCat connection", 30_000);

    llm.enqueue({ text: "Hello Alice, from the model." });
    const asked = napcat.userSays({ userId: alice, text: "hi bot" });
    const answer = await waitFor(() => napcat!.sent.find((m) => m.text === "Hello Alice, from the model."), "the answer in the private chat", 60_000);
    expect(answer).toMatchObject({ messageType: "private", targetId: alice, replyTo: String(asked) });
    const prompt = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(prompt.messages.at(-1))).toContain("hi bot");
    expect(await gw.listedConnected()).toEqual([{ name: "napcat", type: "napcat", enabled: true, connected: true }]);
  }, 120_000);
});
