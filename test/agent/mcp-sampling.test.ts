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
import { referenceSpec } from "../mcp/helpers.js";
import { goResponsesRuntime } from "./go-responses-runtime.js";

let root: string;
let fake: FakeLLM;
let runtime: Runtime | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-sampling-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

describe("MCP sampling requests are answered by nanobot's model, without tools", () => {
  it("server-everything's trigger-sampling-request gets the default agent's completion", async () => {
    const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
    const { config } = resolveConfig(
      {
        providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-sampling-0001" } },
        agents: { defaults: { model: "custom/sampler", workspace: join(root, "ws") } },
        mcpServers: { ev: referenceSpec("everything") },
      },
      { env, cwd: root },
    );
    runtime = new Runtime({ config, home: env.NANOBOT_HOME, env });
    const manager = await runtime.mcp();
    fake.enqueue({ text: "A haiku about tests." });
    const result = await manager.callTool("ev", "trigger-sampling-request", { prompt: "write a haiku", maxTokens: 50 });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain("A haiku about tests.");
    const body = fake.requests[0]?.body as { model: string; messages: Array<{ role: string; content: unknown }>; tools?: unknown };
    expect(body.model).toBe("sampler");
    expect(body.tools).toBeUndefined();
    expect(JSON.stringify(body.messages)).toContain("write a haiku");
    fake.assertDone();
  });
});

function goRuntime(helper: Record<string, unknown>): Runtime {
  return goResponsesRuntime({ root, baseURL: fake.openaiBaseURL, agent: "helper", settings: helper });
}

const limitOf = (i: number): unknown => (fake.requests[i]?.body as Record<string, unknown>)["max_output_tokens"];
const signal = new AbortController().signal;

// A Go-style agent on OpenAI Responses sends no output limit of its own (Go's adapter sends none):
// a server's limit then reaches the provider as asked, whether the hinted agent runs its loop (the
// request ends with a user message) or answers with one completion; an agent's own maxTokens caps it.
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
