/**
 * `agents.defaults.dream.intervalH` / `dream.cron` (Python nanobot keys) set the Dream job the
 * gateway installs, and a changed value replaces the stored job on the next start;
 * `dream.modelOverride` names the preset Dream runs on.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { CronJob } from "../../src/cron/types.js";
import { startFakeLLM } from "../fakes/fake-llm.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-dream-"));
  await mkdir(join(root, "ws"), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function dreamJob(dream: Record<string, unknown> | undefined): Promise<CronJob | undefined> {
  const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: "http://127.0.0.1:9/v1", apiKey: "sk-dream-0001" } },
      agents: { defaults: { model: "custom/m", workspace: join(root, "ws"), timezone: "Asia/Shanghai", ...(dream ? { dream } : {}) } },
    },
    { env, cwd: root, envProviders: false },
  );
  const assistant = await startAssistantGateway(new Runtime({ config, home: join(root, "home"), env }), { port: 0 });
  try {
    return assistant.cron.get("dream");
  } finally {
    await assistant.close();
  }
}

describe("the Dream schedule", () => {
  it("follows dream.intervalH, then dream.cron, then the default, across restarts", async () => {
    expect((await dreamJob({ intervalH: 5 }))?.schedule).toEqual({ kind: "every", everyMs: 5 * 3_600_000 });
    expect((await dreamJob({ intervalH: 5, cron: "0 3 * * *" }))?.schedule).toEqual({ kind: "cron", expr: "0 3 * * *", tz: "Asia/Shanghai" });
    expect((await dreamJob(undefined))?.schedule).toEqual({ kind: "every", everyMs: 2 * 3_600_000 });
    // enabled: false removes the job an earlier start installed.
    expect(await dreamJob({ enabled: false, intervalH: 5 })).toBeUndefined();
  });

  it("refuses a non-positive intervalH with the key named", () => {
    expect(() =>
      resolveConfig({ agents: { defaults: { dream: { intervalH: 0 } } } }, { env: { HOME: root }, cwd: root, envProviders: false }),
    ).toThrow(/agents\.defaults\.dream\.intervalH/);
  });

  it("refuses a cron expression croner cannot run, naming the file and the key", () => {
    const load = () =>
      resolveConfig({ agents: { defaults: { dream: { cron: "61 * * *" } } } }, { env: { HOME: root }, cwd: root, envProviders: false, file: "config.json" });
    expect(load).toThrow(/^config\.json: agents\.defaults\.dream\.cron: expected a cron expression such as "0 3 \* \* \*" \(.+\), got "61 \* \* \*"$/);
  });
});

describe("dream.modelOverride", () => {
  it("runs /dream on the named preset's model, max tokens, temperature and reasoning effort", async () => {
    const fake = await startFakeLLM();
    const workspace = join(root, "ws");
    await mkdir(join(workspace, "memory"), { recursive: true });
    await writeFile(join(workspace, "memory", "history.jsonl"), `${JSON.stringify({ cursor: 1, timestamp: new Date().toISOString(), content: "The user likes tea.", sessionKey: "cli:x" })}\n`);
    const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
    const { config } = resolveConfig(
      {
        providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-dream-0002" } },
        modelPresets: { cheap: { model: "custom/cheap-model", maxTokens: 1000, temperature: 0.7, reasoningEffort: "low" } },
        agents: { defaults: { model: "custom/main-model", maxTokens: 4000, temperature: 0.2, workspace, dream: { modelOverride: "cheap" } } },
      },
      { env, cwd: root, envProviders: false },
    );
    const assistant = await startAssistantGateway(new Runtime({ config, home: join(root, "home"), env }), { port: 0 });
    try {
      fake.enqueue({ text: "Nothing to change." });
      const client = new OpenAI({ baseURL: `${assistant.gateway.server.url}/v1`, apiKey: "unused", maxRetries: 0 });
      await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "/dream" }] });
      expect(fake.requests.length).toBeGreaterThanOrEqual(1);
      expect(fake.requests[0]?.body).toMatchObject({ model: "cheap-model", max_tokens: 1000, temperature: 0.7, reasoning_effort: "low" });
    } finally {
      await assistant.close();
      await fake.close();
    }
  });
});
