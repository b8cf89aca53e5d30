/**
 * Dream on a Go-style config: the default agent on OpenAI Responses sends no output limit of its
 * own (Go's adapter sends none), and its Dream request does not either; an agent that sets
 * maxTokens sends it.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { HistoryLog } from "../../src/memory/history-log.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let root: string;
let fake: FakeLLM;
let runtime: Runtime | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-go-dream-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function dreamLimit(agent: Record<string, unknown>): Promise<unknown> {
  const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
  const { config } = resolveConfig(
    {
      llmProviders: { fake: { dialect: "OpenAIResponses", baseURL: fake.openaiBaseURL, apiKey: "sk-go-dream-0001" } },
      agents: { main: { model: "fake/m", instructions: "You help.", ...agent } },
      workspace: join(root, "ws"),
    },
    { env, cwd: root },
  );
  runtime = new Runtime({ config, home: env.NANOBOT_HOME, env, connectMcp: false });
  new HistoryLog(runtime.workspace).append("cli:x", "Ada drinks tea.");
  const loop = new AgentLoop({ runtime });
  fake.enqueue({ text: "Nothing to change." });
  const result = await loop.runDream();
  expect(result).toMatchObject({ ran: true, processed: 1 });
  await loop.stop();
  const body = fake.requests.at(-1)?.body as Record<string, unknown>;
  expect(fake.requests.at(-1)?.path).toBe("/v1/responses");
  return body["max_output_tokens"];
}

describe("Dream's output limit for a Go agent on Responses", () => {
  it("sends none when the agent sets none, as the agent's own turns", async () => {
    expect(await dreamLimit({})).toBeUndefined();
  });

  it("sends the agent's maxTokens when it sets one", async () => {
    expect(await dreamLimit({ maxTokens: 777 })).toBe(777);
  });
});
