/**
 * Issue 20, item 5 through the built CLI: `nanobot onboard --yes` with no provider writes the
 * Python nanobot's default config and the workspace templates, says which key to fill in — and
 * once the key is there (or already in the environment) `nanobot agent -m` works.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot } from "../support/nanobot-cli.js";

let root: string;
let home: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-onboard-defaults-"));
  home = join(root, "home");
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const nanobot = (args: string[], extra: Record<string, string> = {}) => runNanobot(args, { cwd: root, env: { HOME: root, NANOBOT_HOME: home, ...extra } });
const configFile = () => join(home, "config.json");

describe("nanobot onboard --yes without a provider", () => {
  it("writes the default config and the workspace templates, and names the key to fill in", async () => {
    const r = await nanobot(["onboard", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`wrote ${configFile()}`);
    expect(r.stdout).toContain(`next: put your anthropic API key in providers.anthropic.apiKey in ${configFile()} (or set ANTHROPIC_API_KEY)`);
    const written = JSON.parse(await readFile(configFile(), "utf8")) as Record<string, unknown>;
    expect(written).toEqual({
      providers: { anthropic: { apiKey: "" } },
      agents: {
        defaults: {
          workspace: join(home, "workspace"),
          model: "anthropic/claude-opus-4-5",
          provider: "auto",
          maxTokens: 8192,
          contextWindowTokens: 200000,
          temperature: 0.1,
          maxToolIterations: 200,
        },
      },
      gateway: { host: "127.0.0.1", port: 18790 },
    });
    for (const file of ["AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md", "HEARTBEAT.md", "memory/MEMORY.md"]) {
      expect((await stat(join(home, "workspace", file))).isFile()).toBe(true);
    }
    // The written defaults ask for nothing nanobot lacks: no warnings.
    const check = await nanobot(["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stderr).toBe(`ok: ${configFile()}\n`);

    // Before the key is filled in, a turn says exactly that.
    const early = await nanobot(["agent", "-m", "hi"]);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain("providers.anthropic.apiKey");
    expect(fake.requests).toHaveLength(0);

    // Fill in the key as the message says; the model answers (the fake stands in for Anthropic).
    const filled = JSON.parse(await readFile(configFile(), "utf8")) as { providers: { anthropic: { apiKey: string } } };
    filled.providers.anthropic.apiKey = "sk-ant-onboard-0001";
    await writeFile(configFile(), JSON.stringify(filled));
    fake.enqueue({ text: "hello from the default model" });
    const turn = await nanobot(["agent", "-m", "hi"], { ANTHROPIC_BASE_URL: fake.anthropicBaseURL });
    expect(turn).toMatchObject({ code: 0, stdout: "hello from the default model\n" });
    expect(fake.requests[0]).toMatchObject({ api: "anthropic", body: { model: "claude-opus-4-5", max_tokens: 8192 } });
    expect(fake.requests[0]?.headers["x-api-key"]).toBe("sk-ant-onboard-0001");
    fake.assertDone();
  });

  it("a provider key already in the environment picks that provider, and the config works as written", async () => {
    const keyEnv = { OPENAI_API_KEY: "sk-openai-env-0001", OPENAI_BASE_URL: fake.openaiBaseURL };
    const r = await nanobot(["onboard", "--yes"], keyEnv);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("next: the openai key comes from OPENAI_API_KEY");
    const written = JSON.parse(await readFile(configFile(), "utf8")) as { providers: unknown; agents: { defaults: { model: string } } };
    expect(written.providers).toEqual({ openai: {} });
    expect(written.agents.defaults.model).toBe("openai/gpt-4.1-mini");
    expect(await readFile(configFile(), "utf8")).not.toContain("sk-openai-env-0001");
    fake.enqueue({ text: "ready" });
    expect(await nanobot(["agent", "-m", "hi"], keyEnv)).toMatchObject({ code: 0, stdout: "ready\n" });
    expect(fake.requests[0]?.body.model).toBe("gpt-4.1-mini");
    fake.assertDone();
  });
});
