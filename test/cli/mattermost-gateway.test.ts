/**
 * Mattermost end to end through the built CLI: `nanobot gateway` with a Python-style
 * `config.json` (snake_case keys, as the Python nanobot writes them) enabling the channel
 * against the loopback fake server and a scripted fake LLM. `channels list --json` reports the
 * channel connected; a user's @mention in a channel gets the model's answer in its thread.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MATTERMOST_BOT, MATTERMOST_GROUP_CHANNEL, MATTERMOST_TOKEN, startFakeMattermost } from "../channels/helpers/fake-mattermost.js";
import type { FakeMattermost } from "../channels/helpers/fake-mattermost.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let gw: ChannelGateway | undefined;
let server: FakeMattermost | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await server?.close();
  server = undefined;
  await llm?.close();
  llm = undefined;
});

const alice = { id: "aliceaaaaaaaaaaaaaaaaaaaaa", username: "alice" };

describe("mattermost through nanobot gateway", () => {
  it("connects with a Python config.json and answers a channel mention with the model's reply, in its thread", async () => {
    server = await startFakeMattermost();
    llm = await startFakeLLM();
    llm.enqueue({ text: "The deploy is green." });
    gw = await startChannelGateway({
      channel: "mattermost",
      llm,
      entry: { server_url: server.url, token: MATTERMOST_TOKEN, allow_from: [alice.id], group_policy: "mention", reply_in_thread: true, react_emoji: "eyes" },
    });
    expect(await gw.listedConnected()).toEqual([{ name: "mattermost", type: "mattermost", enabled: true, connected: true }]);

    const postId = server.userPosts({ author: alice, message: `@${MATTERMOST_BOT.username} how is the deploy?`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    const answer = await waitFor(() => server!.botPosts().find((p) => p.message === "The deploy is green."), "the model's answer", 60_000);
    expect(answer).toMatchObject({ channelId: MATTERMOST_GROUP_CHANNEL, rootId: postId });
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("how is the deploy?");
    expect(server.reactions).toContainEqual({ action: "add", postId, emoji: "eyes" });
  }, 120_000);
});
