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
import type { Runtime } from "../../src/agent/runtime.js";
import { HistoryLog } from "../../src/memory/history-log.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { goResponsesRuntime } from "./go-responses-runtime.js";

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
  runtime = goResponsesRuntime({ root, baseURL: fake.openaiBaseURL, agent: "main", settings: agent, workspace: join(root, "ws") });
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
