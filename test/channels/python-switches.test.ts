/**
 * The Python nanobot's channel switches and notices, end to end: the assembled gateway with a
 * Python-style config, a real TelegramChannel against the fake Bot API, and the fake LLM.
 * As in the Python nanobot, the model's text before its tool calls (`sendProgress`) and the tool
 * hints (`sendToolHints`, cut to toolHintMaxLength) reach the chat, each switched on its own and
 * both on by default for a Python-style config; retry notices never do; `sendMaxRetries` bounds
 * delivery attempts.
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

async function startGateway(channels: Record<string, unknown>, defaults: Record<string, unknown> = {}, named: Record<string, unknown> = {}): Promise<void> {
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
      agents: { ...named, defaults: { model: "custom/test-model", workspace, ...defaults } },
      tools: { exec: { sandbox: "none" } },
      channels: { ...channels, telegram: { enabled: true, token: BOT_TOKEN, apiRoot: bot.url, allowFrom: ["42"], pollingTimeoutS: 1, ...(channels.telegram as object) } },
    },
    { env, cwd: root, envProviders: false },
  );
  assistant = await startAssistantGateway(new Runtime({ config, home, env }), { port: 0 });
  expect(assistant.channelResults).toEqual([expect.objectContaining({ name: "telegram", ok: true })]);
}

const down = { kind: "error", status: 503, body: { error: { message: "unavailable", type: "server_error", param: null, code: null } } } as const;
const longCommand = "echo 0123456789abcdefghijklmnopqrstuvwxyz";

describe("Python channel notices through the gateway", () => {
  const thinking = { text: "Let me run it.", toolCalls: [{ id: "c1", name: "exec", arguments: { command: longCommand } }] };
  const runIt = async (answer: string): Promise<Array<string | undefined>> => {
    bot!.pushMessage({ chatId: 42, from: { id: 42, username: "alice" }, text: "run it" });
    await waitFor(() => bot!.messages.some((m) => m.text === answer), "the answer");
    return bot!.messages.map((m) => m.text);
  };

  it("a Python-style config without the switches gets Python's defaults: the model's text, then the hint cut to toolHintMaxLength; never the retry notice", async () => {
    await startGateway({}, { toolHintMaxLength: 20 });
    llm!.enqueue(down, thinking, { text: "all done" });
    const texts = await runIt("all done");
    expect(texts).toEqual(["Let me run it.", "$ echo 0123456789abcd…", "all done"]);
    expect(texts.join("\n")).not.toContain("Model request failed");
  });

  it("sendToolHints: false keeps tool hints out but not the model's text", async () => {
    await startGateway({ sendProgress: true, sendToolHints: false });
    llm!.enqueue(thinking, { text: "finished" });
    expect(await runIt("finished")).toEqual(["Let me run it.", "finished"]);
  });

  it("sendProgress: false keeps the model's text out but not the tool hints (each switch on its own, as in Python)", async () => {
    await startGateway({ sendProgress: false }, { toolHintMaxLength: 20 });
    llm!.enqueue(thinking, { text: "finished" });
    expect(await runIt("finished")).toEqual(["$ echo 0123456789abcd…", "finished"]);
  });

  it("a channel's own switch wins over the one under channels", async () => {
    await startGateway({ sendProgress: false, sendToolHints: false, telegram: { sendToolHints: true } }, { toolHintMaxLength: 20 });
    llm!.enqueue(thinking, { text: "finished" });
    expect(await runIt("finished")).toEqual(["$ echo 0123456789abcd…", "finished"]);
  });

  it("a Go-style config (named agents) keeps nanobot's default: the chat gets only the answer", async () => {
    await startGateway({}, {}, { helper: { instructions: "You help." } });
    llm!.enqueue(thinking, { text: "quiet answer" });
    expect(await runIt("quiet answer")).toEqual(["quiet answer"]);
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
