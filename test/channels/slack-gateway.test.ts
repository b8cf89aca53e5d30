/**
 * Slack end to end through the gateway, with the scripted fake LLM:
 * - the built CLI's `nanobot gateway` with a Python-style `config.json` (snake_case keys as the
 *   Python nanobot writes them) enabling Slack in Socket Mode against the fake Slack: a user's
 *   direct message is answered by the model, and `nanobot channels list --json` shows the channel
 *   connected;
 * - the assembled gateway in-process with Slack in Events API mode: Slack's signed POST to
 *   `/slack/events` on the gateway's own HTTP server is answered by the model.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { slackSignature } from "../../src/channels/slack/events-api.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";
import { SLACK_APP_TOKEN, SLACK_BOT_TOKEN, startFakeSlack } from "./helpers/fake-slack.js";
import type { FakeSlack } from "./helpers/fake-slack.js";
import { waitFor } from "./helpers/harness.js";

const alice = { id: "U0ALICE", username: "alice" };

let root: string | undefined;
let llm: FakeLLM | undefined;
let slack: FakeSlack | undefined;
let gateway: RunningNanobot | undefined;
let assistant: RunningAssistant | undefined;

afterEach(async () => {
  await gateway?.stop();
  await assistant?.close();
  await slack?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = assistant = slack = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Report {
  source: string;
  channels: Array<{ name: string; type: string; enabled: boolean; connected: boolean | null }>;
}

describe("slack through the gateway", () => {
  it("nanobot gateway with a Python config.json answers a Slack DM (Socket Mode) and lists the channel connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-slack-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(home, { recursive: true });
    await mkdir(workspace, { recursive: true });
    llm = await startFakeLLM();
    llm.enqueue({ text: "hello from the model" });
    slack = await startFakeSlack();
    const port = await freePort();
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { api_base: llm.openaiBaseURL, api_key: "sk-fake-slack-e2e-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        gateway: { port },
        channels: {
          slack: {
            enabled: true,
            mode: "socket",
            bot_token: SLACK_BOT_TOKEN,
            app_token: SLACK_APP_TOKEN,
            allow_from: [alice.id],
            group_policy: "mention",
            react_emoji: "eyes",
            apiRoot: slack.apiRoot,
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    const list = async (): Promise<Report> => {
      const run = await runNanobot(["channels", "list", "--json"], { cwd: root!, env });
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Report;
    };
    // The channels start after the server listens: wait until Slack reports connected.
    let report = await list();
    for (let i = 0; i < 40 && report.channels[0]?.connected !== true; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      report = await list();
    }
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "slack", type: "slack", enabled: true, connected: true }]);

    await slack.say({ user: alice, text: "hi bot" });
    const dm = slack.dmChannel(alice);
    await waitFor(() => slack!.messages.find((m) => m.channel === dm && m.text === "hello from the model"), "the model's answer in the DM", 30_000);
    // The receipt is swapped right after the answer went out.
    await waitFor(() => slack!.reactions.length === 3, "the done reaction", 30_000);
    expect(slack.reactions.map((r) => [r.action, r.name])).toEqual([
      ["add", "eyes"],
      ["remove", "eyes"],
      ["add", "white_check_mark"],
    ]);
  }, 120_000);

  it("the gateway's HTTP server receives Slack's Events API and the model answers", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-slack-http-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    llm = await startFakeLLM();
    llm.enqueue({ text: "answered over http" });
    slack = await startFakeSlack();
    const env = { HOME: root, NANOBOT_HOME: home, PATH: process.env.PATH ?? "" };
    const secret = "fake-signing-secret";
    const { config } = resolveConfig(
      {
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-slack-e2e-0002" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        channels: { slack: { enabled: true, mode: "http", botToken: SLACK_BOT_TOKEN, signingSecret: secret, allowFrom: [alice.id], apiRoot: slack.apiRoot } },
      },
      { env, cwd: root, envProviders: false },
    );
    assistant = await startAssistantGateway(new Runtime({ config, home, env }), { port: 0 });
    expect(assistant.channelResults).toEqual([expect.objectContaining({ name: "slack", ok: true })]);

    const { event } = slack.messageEvent({ user: alice, text: "hello over http" });
    const body = JSON.stringify({ type: "event_callback", team_id: "T0FAKE", api_app_id: "A0FAKE", event_id: "Ev0HTTP", event_time: 1, event });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const response = await fetch(`${assistant.gateway.server.url}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-slack-request-timestamp": timestamp, "x-slack-signature": slackSignature(secret, timestamp, body) },
      body,
    });
    expect(response.status).toBe(200);
    await waitFor(() => slack!.messages.find((m) => m.text === "answered over http"), "the model's answer", 30_000);
    expect(slack.messages.filter((m) => !m.deleted).map((m) => [m.channel, m.text])).toEqual([[slack.dmChannel(alice), "answered over http"]]);
  }, 60_000);
});
