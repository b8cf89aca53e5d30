import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { referenceSpec } from "../mcp/helpers.js";

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
