/**
 * A Go-style agent on OpenAI Responses sends no output limit of its own (Go's adapter sends none):
 * an MCP server's `sampling/createMessage` limit then reaches the provider as the server asked,
 * whether the hinted agent runs its loop (the request ends with a user message) or answers with
 * one completion; an agent that sets `maxTokens` keeps the lower of the two.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSamplingHandler } from "../../src/agent/mcp-sampling.js";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { assistantMessage, userMessage } from "../../src/core/message-helpers.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let root: string;
let fake: FakeLLM;
let runtime: Runtime | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-go-limit-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function goRuntime(helper: Record<string, unknown>): Runtime {
  const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
  const { config } = resolveConfig(
    {
      llmProviders: { fake: { dialect: "OpenAIResponses", baseURL: fake.openaiBaseURL, apiKey: "sk-go-limit-0001" } },
      agents: { helper: { model: "fake/m", instructions: "You help.", ...helper } },
    },
    { env, cwd: root },
  );
  return new Runtime({ config, home: env.NANOBOT_HOME, env, connectMcp: false });
}

const limitOf = (i: number): unknown => (fake.requests[i]?.body as Record<string, unknown>)["max_output_tokens"];
const signal = new AbortController().signal;

describe("a Go agent's output limit under MCP sampling", () => {
  it("an agent that sets none sends the server's limit, in its loop and as one completion", async () => {
    runtime = goRuntime({});
    expect((await runtime.resolveAgent("helper")).omitMaxTokens).toBe(true);
    const handle = createSamplingHandler(runtime);
    fake.enqueue({ text: "Looped." }, { text: "Completed." });
    await handle({ server: "s", messages: [userMessage("plan it")], maxTokens: 300, modelHints: ["helper"] }, signal);
    await handle({ server: "s", messages: [userMessage("plan it"), assistantMessage("Sure:")], maxTokens: 250, modelHints: ["helper"] }, signal);
    expect([limitOf(0), limitOf(1)]).toEqual([300, 250]);
    fake.assertDone();
  });

  it("an agent's own maxTokens is the most a server gets", async () => {
    runtime = goRuntime({ maxTokens: 200 });
    const handle = createSamplingHandler(runtime);
    fake.enqueue({ text: "Looped." }, { text: "Completed." });
    await handle({ server: "s", messages: [userMessage("plan it")], maxTokens: 300, modelHints: ["helper"] }, signal);
    await handle({ server: "s", messages: [userMessage("plan it"), assistantMessage("Sure:")], maxTokens: 300, modelHints: ["helper"] }, signal);
    expect([limitOf(0), limitOf(1)]).toEqual([200, 200]);
  });
});
