/**
 * The Python nanobot's channel switches and notices, end to end: the assembled gateway with a
 * Python-style config, a real TelegramChannel against the fake Bot API, and the fake LLM.
 * Retry notices and tool hints (cut to toolHintMaxLength) reach the chat; `channels.sendProgress`
 * and `sendToolHints` switch them; `sendMaxRetries` bounds delivery attempts.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { retryDelaysFor } from "../../src/channels/channel-manager.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { BOT_TOKEN, startFakeBotApi } from "./helpers/fake-bot-api.js";
import type { FakeBotApi } from "./helpers/fake-bot-api.js";
import { waitFor } from "./helpers/harness.js";
import { startTelegram } from "./helpers/telegram-setup.js";
import type { TelegramSetup } from "./helpers/telegram-setup.js";

let root: string | undefined;
let llm: FakeLLM | undefined;
let bot: FakeBotApi | undefined;
let assistant: RunningAssistant | undefined;
let setup: TelegramSetup | undefined;

afterEach(async () => {
  await assistant?.close();
  await setup?.close();
  await bot?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  assistant = setup = bot = llm = root = undefined;
});

async function startGateway(channels: Record<string, unknown>, defaults: Record<string, unknown> = {}): Promise<void> {
  root = await mkdtemp(join(tmpdir(), "nanobot-py-switches-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  llm = await startFakeLLM();
  bot = await startFakeBotApi();
  // NANOBOT_RETRY_SCALE=0: the retry's wait is announced as scheduled but not slept.
  const env = { HOME: root, NANOBOT_HOME: home, NANOBOT_RETRY_SCALE: "0", PATH: process.env.PATH ?? "" };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-py-switches-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace, ...defaults } },
      tools: { exec: { sandbox: "none" } },
      channels: { ...channels, telegram: { enabled: true, token: BOT_TOKEN, apiRoot: bot.url, allowFrom: ["42"], pollingTimeoutS: 1 } },
    },
    { env, cwd: root, envProviders: false },
  );
  assistant = await startAssistantGateway(new Runtime({ config, home, env }), { port: 0 });
  expect(assistant.channelResults).toEqual([expect.objectContaining({ name: "telegram", ok: true })]);
}

const down = { kind: "error", status: 503, body: { error: { message: "unavailable", type: "server_error", param: null, code: null } } } as const;
const longCommand = "echo 0123456789abcdefghijklmnopqrstuvwxyz";

describe("Python channel notices through the gateway", () => {
  it("sends the retry notice and a tool hint cut to toolHintMaxLength, then the answer", async () => {
    await startGateway({ sendProgress: true }, { toolHintMaxLength: 20 });
    llm!.enqueue(down, { toolCalls: [{ id: "c1", name: "exec", arguments: { command: longCommand } }] }, { text: "all done" });
    bot!.pushMessage({ chatId: 42, from: { id: 42, username: "alice" }, text: "run it" });
    await waitFor(() => bot!.messages.some((m) => m.text === "all done"), "the answer");
    const texts = bot!.messages.map((m) => m.text);
    expect(texts).toContain("Model request failed, retry in 1s (attempt 1).");
    expect(texts).toContain("$ echo 0123456789abcd…");
    expect(texts.indexOf("$ echo 0123456789abcd…")).toBeLessThan(texts.indexOf("all done"));
  });

  it("sendToolHints: false keeps tool hints out of the chat but not the retry notice", async () => {
    await startGateway({ sendProgress: true, sendToolHints: false });
    llm!.enqueue(down, { toolCalls: [{ id: "c1", name: "exec", arguments: { command: "echo hi" } }] }, { text: "finished" });
    bot!.pushMessage({ chatId: 42, from: { id: 42, username: "alice" }, text: "run it" });
    await waitFor(() => bot!.messages.some((m) => m.text === "finished"), "the answer");
    const texts = bot!.messages.map((m) => m.text);
    expect(texts).toContain("Model request failed, retry in 1s (attempt 1).");
    expect(texts.some((t) => t?.startsWith("$ "))).toBe(false);
  });

  it("without sendProgress (nanobot's default) the chat gets only the answer", async () => {
    await startGateway({});
    llm!.enqueue({ toolCalls: [{ id: "c1", name: "exec", arguments: { command: "echo hi" } }] }, { text: "quiet answer" });
    bot!.pushMessage({ chatId: 42, from: { id: 42, username: "alice" }, text: "run it" });
    await waitFor(() => bot!.messages.some((m) => m.text === "quiet answer"), "the answer");
    expect(bot!.messages.map((m) => m.text)).toEqual(["quiet answer"]);
  });
});

describe("channels.sendMaxRetries", () => {
  it("counts delivery attempts, the first included", () => {
    expect(retryDelaysFor(3)).toEqual([1000, 2000]);
    expect(retryDelaysFor(0)).toEqual([]);
  });

  it("1 attempt: a failed send is not retried", async () => {
    setup = await startTelegram({}, { switches: { sendMaxRetries: 1 }, realDelivery: true });
    setup.fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
    await setup.bus.publishOutbound({ channel: "telegram", chatId: "42", kind: "message", id: "r-1", content: "hello" });
    await waitFor(() => setup!.busErrors.length === 1, "the delivery failure");
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
    expect(setup.fake.messages).toEqual([]);
  });
});
