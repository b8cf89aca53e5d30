/**
 * Mattermost end to end through the built CLI: `nanobot gateway` with a Python-style
 * `config.json` (snake_case keys, as the Python nanobot writes them) enabling the channel
 * against the loopback fake server and a scripted fake LLM. `channels list --json` reports the
 * channel connected; a user's @mention in a channel gets the model's answer in its thread.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MATTERMOST_BOT, MATTERMOST_GROUP_CHANNEL, MATTERMOST_TOKEN, startFakeMattermost } from "../channels/helpers/fake-mattermost.js";
import type { FakeMattermost } from "../channels/helpers/fake-mattermost.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string;
let gateway: RunningNanobot | undefined;
let server: FakeMattermost | undefined;
let llm: FakeLLM | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-mattermost-e2e-"));
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await server?.close();
  server = undefined;
  await llm?.close();
  llm = undefined;
  await rm(root, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const alice = { id: "aliceaaaaaaaaaaaaaaaaaaaaa", username: "alice" };

describe("mattermost through nanobot gateway", () => {
  it("connects with a Python config.json and answers a channel mention with the model's reply, in its thread", async () => {
    server = await startFakeMattermost();
    llm = await startFakeLLM();
    llm.enqueue({ text: "The deploy is green." });
    const home = join(root, "home");
    await mkdir(home, { recursive: true });
    await mkdir(join(root, "ws"));
    const port = await freePort();
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { api_base: llm.openaiBaseURL, api_key: "sk-fake-mattermost-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
        gateway: { port },
        channels: {
          mattermost: {
            enabled: true,
            server_url: server.url,
            token: MATTERMOST_TOKEN,
            allow_from: [alice.id],
            group_policy: "mention",
            reply_in_thread: true,
            react_emoji: "eyes",
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);

    let report: { channels: Array<Record<string, unknown>> } = { channels: [] };
    for (let i = 0; i < 40 && report.channels[0]?.connected !== true; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 250));
      const run = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
      expect(run.code, run.stderr).toBe(0);
      report = JSON.parse(run.stdout) as typeof report;
    }
    expect(report.channels).toEqual([{ name: "mattermost", type: "mattermost", enabled: true, connected: true }]);

    const postId = server.userPosts({ author: alice, message: `@${MATTERMOST_BOT.username} how is the deploy?`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    const answer = await waitFor(() => server!.botPosts().find((p) => p.message === "The deploy is green."), "the model's answer", 60_000);
    expect(answer).toMatchObject({ channelId: MATTERMOST_GROUP_CHANNEL, rootId: postId });
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("how is the deploy?");
    expect(server.reactions).toContainEqual({ action: "add", postId, emoji: "eyes" });
  }, 120_000);
});
