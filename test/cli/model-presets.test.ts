/**
 * Issue 20, item 1 through the built CLI (`bin/nanobot.js`) with a Python-style config.json:
 * `modelPresets`, `agents.defaults.modelPreset` (which wins over `model`, as in Python), the
 * reserved `default` preset, `fallbackModels` by preset name, and `/model <preset>` per session —
 * each asserted on the fake LLM's recorded request body (max_tokens, temperature, reasoning_effort).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot } from "../support/nanobot-cli.js";

let root: string;
let home: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-presets-"));
  home = join(root, "home");
  workspace = join(root, "ws");
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ HOME: root, NANOBOT_HOME: home, NANOBOT_RETRY_SCALE: "0" });
const nanobot = (args: string[]) => runNanobot(args, { cwd: root, env: env() });

/** A Python nanobot config.json: snake_case and camelCase both occur in the wild. */
async function writeConfig(defaults: Record<string, unknown>, presets: Record<string, unknown> = PRESETS): Promise<void> {
  const config = {
    providers: { custom: { api_key: "sk-presets-test-0001", api_base: fake.openaiBaseURL } },
    model_presets: presets,
    agents: { defaults: { workspace, ...defaults } },
  };
  await writeFile(join(home, "config.json"), JSON.stringify(config, null, 2));
}

const PRESETS = {
  fast: { model: "fast-model", provider: "custom", maxTokens: 1234, contextWindowTokens: 64_000, temperature: 0.7, reasoningEffort: "low" },
  deep: { model: "deep-model", provider: "custom", max_tokens: 4321, temperature: 0.2, reasoning_effort: "high" },
  bare: { model: "custom/bare-model" },
};

/** The generation fields of the n-th request as the wire carried them. */
function wire(n: number): { model: unknown; max_tokens: unknown; temperature: unknown; reasoning_effort: unknown } {
  const body = fake.requests[n]?.body ?? {};
  return { model: body.model, max_tokens: body.max_tokens, temperature: body.temperature, reasoning_effort: body.reasoning_effort };
}

describe("modelPresets on the wire", () => {
  it("agents.defaults.modelPreset wins over model/maxTokens/temperature (Python's precedence)", async () => {
    await writeConfig({ model: "custom/direct-model", maxTokens: 999, temperature: 0.3, modelPreset: "fast" });
    fake.enqueue({ text: "fast answer" });
    const r = await nanobot(["agent", "-m", "hi"]);
    expect(r).toMatchObject({ code: 0, stdout: "fast answer\n" });
    expect(wire(0)).toEqual({ model: "fast-model", max_tokens: 1234, temperature: 0.7, reasoning_effort: "low" });
    fake.assertDone();
  });

  it("a preset-only config sends the preset's values, and a preset's omitted fields take Python's preset defaults", async () => {
    await writeConfig({ modelPreset: "deep" });
    fake.enqueue({ text: "deep answer" });
    expect((await nanobot(["agent", "-m", "hi"])).code).toBe(0);
    expect(wire(0)).toEqual({ model: "deep-model", max_tokens: 4321, temperature: 0.2, reasoning_effort: "high" });

    // `bare` names only a model: 8192 / 0.1 / no effort, not the agents.defaults values.
    await writeConfig({ modelPreset: "bare", maxTokens: 500, temperature: 0.9, reasoningEffort: "medium" });
    fake.enqueue({ text: "bare answer" });
    expect((await nanobot(["agent", "-m", "hi"])).code).toBe(0);
    expect(wire(1)).toEqual({ model: "bare-model", max_tokens: 8192, temperature: 0.1, reasoning_effort: undefined });
    fake.assertDone();
  });

  it("without modelPreset the direct fields are the implicit `default` preset", async () => {
    await writeConfig({ model: "custom/direct-model", maxTokens: 999, temperature: 0.3, reasoningEffort: "xhigh" });
    fake.enqueue({ text: "direct" });
    expect((await nanobot(["agent", "-m", "hi"])).code).toBe(0);
    // Python's `xhigh` is sent as the strongest effort the wire knows.
    expect(wire(0)).toEqual({ model: "direct-model", max_tokens: 999, temperature: 0.3, reasoning_effort: "high" });
    fake.assertDone();
  });
});

describe("agents.defaults.provider forces the provider, as in Python", () => {
  it("an OpenRouter-style model name goes to the named provider unchanged", async () => {
    await writeConfig({ model: "anthropic/claude-opus-4-5", provider: "custom" });
    fake.enqueue({ text: "routed" });
    expect(await nanobot(["agent", "-m", "hi"])).toMatchObject({ code: 0, stdout: "routed\n" });
    expect(wire(0).model).toBe("anthropic/claude-opus-4-5");
    fake.assertDone();
  });
});

describe("/model <preset> per session", () => {
  it("applies the preset's model, window, max tokens, temperature and effort, persists for the session only", async () => {
    await writeConfig({ model: "custom/direct-model", maxTokens: 999, temperature: 0.3, modelPreset: "fast" });
    const switched = await nanobot(["agent", "-s", "cli:one", "-m", "/model Deep"]);
    expect(switched.code).toBe(0);
    expect(switched.stdout).toContain("Switched model preset to deep (this session).");
    expect(switched.stdout).toContain("Model: custom/deep-model");
    expect(switched.stdout).toContain("Context window: 200000");
    expect(switched.stdout).toContain("Max output tokens: 4321");
    expect(fake.requests).toHaveLength(0);

    // A new process: the choice was persisted with the session.
    fake.enqueue({ text: "deep one" }, { text: "fast two" });
    expect((await nanobot(["agent", "-s", "cli:one", "-m", "hi"])).stdout).toBe("deep one\n");
    expect(wire(0)).toEqual({ model: "deep-model", max_tokens: 4321, temperature: 0.2, reasoning_effort: "high" });
    // Another session keeps following agents.defaults.modelPreset.
    expect((await nanobot(["agent", "-s", "cli:two", "-m", "hi"])).stdout).toBe("fast two\n");
    expect(wire(1)).toMatchObject({ model: "fast-model", max_tokens: 1234 });

    // `default` means the direct agents.defaults fields, even though modelPreset says fast.
    expect((await nanobot(["agent", "-s", "cli:one", "-m", "/model default"])).stdout).toContain("Model: custom/direct-model");
    fake.enqueue({ text: "direct three" });
    await nanobot(["agent", "-s", "cli:one", "-m", "hi"]);
    expect(wire(2)).toEqual({ model: "direct-model", max_tokens: 999, temperature: 0.3, reasoning_effort: undefined });

    const status = await nanobot(["agent", "-s", "cli:one", "-m", "/model"]);
    expect(status.stdout).toBe("Model: custom/direct-model\nPreset: default (this session)\nPresets: default, bare, deep, fast\n");
    const unknown = await nanobot(["agent", "-s", "cli:one", "-m", "/model turbo"]);
    expect(unknown.stdout).toContain('Could not switch model preset: "turbo" not found.');
    fake.assertDone();
  });
});

describe("a session's preset removed from the config", () => {
  it("the session follows the configured model again, as in Python, and /model says why", async () => {
    await writeConfig({ modelPreset: "fast" });
    expect((await nanobot(["agent", "-s", "cli:one", "-m", "/model deep"])).code).toBe(0);
    const { deep: _removed, ...withoutDeep } = PRESETS;
    await writeConfig({ modelPreset: "fast" }, withoutDeep);
    fake.enqueue({ text: "fast again" });
    expect(await nanobot(["agent", "-s", "cli:one", "-m", "hi"])).toMatchObject({ code: 0, stdout: "fast again\n" });
    expect(wire(0)).toMatchObject({ model: "fast-model", max_tokens: 1234 });
    const status = await nanobot(["agent", "-s", "cli:one", "-m", "/model"]);
    expect(status.stdout).toContain("Preset: deep was removed from modelPresets; this session follows the configured model");
    fake.assertDone();
  });
});

describe("fallbackModels by preset name", () => {
  it("a failing primary falls back to the named preset, with that preset's settings on the wire", async () => {
    await writeConfig({ modelPreset: "fast", fallbackModels: ["deep"] });
    fake.enqueue({ kind: "error", status: 401, body: { error: { message: "invalid api key", type: "invalid_request_error" } } }, { text: "from deep" });
    const r = await nanobot(["agent", "-m", "hi"]);
    expect(r).toMatchObject({ code: 0, stdout: "from deep\n" });
    expect(wire(0)).toMatchObject({ model: "fast-model", max_tokens: 1234 });
    expect(wire(1)).toEqual({ model: "deep-model", max_tokens: 4321, temperature: 0.2, reasoning_effort: "high" });
    fake.assertDone();
  });

  it("an inline fallback inherits max tokens and temperature but not the reasoning effort", async () => {
    await writeConfig({ modelPreset: "fast", fallbackModels: [{ provider: "custom", model: "inline-model" }] });
    fake.enqueue({ kind: "error", status: 401, body: { error: { message: "invalid api key" } } }, { text: "from inline" });
    expect((await nanobot(["agent", "-m", "hi"])).stdout).toBe("from inline\n");
    expect(wire(1)).toEqual({ model: "inline-model", max_tokens: 1234, temperature: 0.7, reasoning_effort: undefined });
    fake.assertDone();
  });
});

describe("preset names are checked when the config loads", () => {
  it("an unknown modelPreset, a bare fallback that is no preset, and a `default` preset are configuration errors", async () => {
    await writeConfig({ modelPreset: "turbo" });
    let r = await nanobot(["config", "check"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agents.defaults.modelPreset: preset "turbo" not found in modelPresets (available: default, bare, deep, fast)');

    await writeConfig({ modelPreset: "fast", fallbackModels: ["deep", "smart"] });
    r = await nanobot(["agent", "-m", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agents.defaults.fallbackModels[1]: "smart" is not a preset in modelPresets');

    await writeConfig({ model: "custom/direct-model" }, { ...PRESETS, default: { model: "custom/x" } });
    r = await nanobot(["config", "check"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the name "default" is reserved for the agents.defaults fields');
    expect(fake.requests).toHaveLength(0);
  });
});
