/**
 * Issue 20, item 3 through the built CLI: `agents.defaults.llmTimeoutS`, `NANOBOT_LLM_TIMEOUT_S`
 * and `NANOBOT_STREAM_IDLE_TIMEOUT_S` bound each model call. A call that overruns ends, is
 * retried, and when every attempt overran the error names the timeout. No timing assertions:
 * the fake LLM waits far longer than the limit, so only a working limit lets the run end.
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
let fake: FakeLLM;

/** Far beyond every limit below and the CLI run's own 30 s kill: only the timeout ends a call. */
const NEVER_MS = 60_000;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-llm-timeout-"));
  home = join(root, "home");
  await mkdir(join(root, "ws"), { recursive: true });
  await mkdir(home, { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function writeConfig(defaults: Record<string, unknown> = {}): Promise<void> {
  const config = {
    providers: { custom: { apiKey: "sk-timeout-test-0001", apiBase: fake.openaiBaseURL } },
    agents: { defaults: { model: "custom/slow-model", workspace: join(root, "ws"), ...defaults } },
  };
  await writeFile(join(home, "config.json"), JSON.stringify(config));
}

const nanobot = (args: string[], extraEnv: Record<string, string> = {}) =>
  runNanobot(args, { cwd: root, env: { HOME: root, NANOBOT_HOME: home, NANOBOT_RETRY_SCALE: "0", ...extraEnv } });

describe("llmTimeoutS bounds every model call", () => {
  it("a model that never answers: each attempt ends, is retried, and the final error names the timeout", async () => {
    await writeConfig({ llmTimeoutS: 0.5 });
    fake.enqueue(...Array.from({ length: 4 }, () => ({ text: "too late", delayMs: NEVER_MS })));
    const r = await nanobot(["agent", "-m", "hi"]);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull(); // ended by itself, not killed
    // The standard schedule: 4 attempts, each cut by the limit.
    expect(fake.requests).toHaveLength(4);
    expect(r.stderr).toContain("custom/slow-model: no complete answer within 0.5s (the LLM timeout: llmTimeoutS / NANOBOT_LLM_TIMEOUT_S)");
    expect(r.stdout).not.toContain("too late");
    fake.assertDone();
  });

  it("a timed-out attempt is retried and the retry's answer is the reply (NANOBOT_LLM_TIMEOUT_S)", async () => {
    await writeConfig();
    fake.enqueue({ text: "too late", delayMs: NEVER_MS }, { text: "second try" });
    const r = await nanobot(["agent", "-m", "hi"], { NANOBOT_LLM_TIMEOUT_S: "0.5" });
    expect(r).toMatchObject({ code: 0, stdout: "second try\n" });
    expect(fake.requests).toHaveLength(2);
    fake.assertDone();
  });

  it("an answer that keeps streaming is not cut by a small llmTimeoutS (Python's max(300 s, 2×) for streams)", async () => {
    await writeConfig({ llmTimeoutS: 0.5 });
    // Six chunks 300 ms apart: the whole answer takes longer than the limit, each gap is short.
    fake.enqueue({ text: "one two three four five six", chunkSize: 4, chunkDelayMs: 300 });
    const r = await nanobot(["agent", "-m", "hi"]);
    expect(r).toMatchObject({ code: 0, stdout: "one two three four five six\n" });
    expect(fake.requests).toHaveLength(1);
    fake.assertDone();
  });

  it("the config key wins over the environment; 0 turns the limit off", async () => {
    await writeConfig({ llmTimeoutS: 0 });
    // With the limit off, a 1 s answer is waited for although the environment says 0.2 s.
    fake.enqueue({ text: "patient", delayMs: 1_000 });
    const r = await nanobot(["agent", "-m", "hi"], { NANOBOT_LLM_TIMEOUT_S: "0.2" });
    expect(r).toMatchObject({ code: 0, stdout: "patient\n" });
    expect(fake.requests).toHaveLength(1);
    fake.assertDone();
  });

  it("NANOBOT_STREAM_IDLE_TIMEOUT_S ends a stalled stream, which is retried", async () => {
    await writeConfig();
    fake.enqueue({ text: "one two three", fault: { type: "stall", afterChunks: 0 } }, { text: "recovered" });
    const r = await nanobot(["agent", "-m", "hi"], { NANOBOT_STREAM_IDLE_TIMEOUT_S: "0.5" });
    expect(r).toMatchObject({ code: 0, stdout: "recovered\n" });
    expect(fake.requests).toHaveLength(2);
    fake.assertDone();
  });
});
