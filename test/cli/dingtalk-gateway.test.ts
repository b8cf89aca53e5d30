/**
 * DingTalk end to end: the built CLI's `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.dingtalk` against the fake DingTalk platform
 * and the scripted fake LLM. A user's direct message gets the model's answer through the robot
 * send API, and `nanobot channels list --json` reports the channel connected.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET, startFakeDingTalk } from "../channels/helpers/fake-dingtalk.js";
import type { FakeDingTalk } from "../channels/helpers/fake-dingtalk.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string;
let llm: FakeLLM;
let dingtalk: FakeDingTalk;
let gateway: RunningNanobot | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-dingtalk-gw-"));
  llm = await startFakeLLM();
  dingtalk = await startFakeDingTalk();
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await dingtalk.close();
  await llm.close();
  await rm(root, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const alice = { id: "0211223344556677", username: "alice" };

describe("dingtalk through the gateway", () => {
  it("answers a direct message with the model's reply and lists the channel connected", async () => {
    const home = join(root, "home");
    await mkdir(join(root, "ws"), { recursive: true });
    await mkdir(home, { recursive: true });
    const port = await freePort();
    // The Python nanobot's keys, as its config.json spells them; apiRoot/oapiRoot point at the fake.
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-dingtalk-gw-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws"), dream: { enabled: false } } },
        gateway: { port, heartbeat: { enabled: false } },
        channels: {
          dingtalk: {
            enabled: true,
            clientId: DINGTALK_CLIENT_ID,
            clientSecret: DINGTALK_CLIENT_SECRET,
            allowFrom: [alice.id],
            apiRoot: dingtalk.url,
            oapiRoot: dingtalk.url,
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    llm.enqueue({ text: "hello from the model" });
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await waitFor(() => dingtalk.liveSockets() > 0, "the stream connection", 30_000);

    dingtalk.pushMessage({ from: alice, text: "hi bot" });
    const answer = await waitFor(() => dingtalk.messages.find((m) => m.text === "hello from the model"), "the answer", 30_000);
    expect(answer).toMatchObject({ chatId: alice.id, via: "batchSend", msgKey: "sampleMarkdown" });
    const prompt = JSON.stringify(llm.requests.at(-1)?.body ?? {});
    expect(prompt).toContain("hi bot");

    const listed = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(listed.code, listed.stderr).toBe(0);
    const report = JSON.parse(listed.stdout) as { source: string; channels: unknown[] };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "dingtalk", type: "dingtalk", enabled: true, connected: true }]);
  }, 120_000);
});
