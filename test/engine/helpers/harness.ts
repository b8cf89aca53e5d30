/**
 * Test plumbing for the engine: the scripted fake LLM behind the real OpenAI Chat adapter,
 * small tool builders, and a collector for a run's events and result.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentEvent, AgentStream, RunResult } from "../../../src/core/events.js";
import type { LanguageModel } from "../../../src/core/llm.js";
import { streamChat } from "../../../src/providers/index.js";
import type { Tool, ToolOutput } from "../../../src/tools/tool.js";
import type { FakeLLM, RecordedRequest } from "../../fakes/fake-llm-types.js";

/** The chat adapter pointed at the fake (retries are the provider decorators' job, not used here). */
export function makeModel(fake: FakeLLM, options: { model?: string; contextWindow?: number } = {}): LanguageModel {
  const model = options.model ?? "gpt-4o";
  const target = { provider: "fake", model, api: "chat" as const, baseURL: fake.openaiBaseURL, apiKey: "sk-test" };
  return {
    provider: "fake",
    model,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    stream: (request, signal) => streamChat(target, request, signal),
  };
}

export interface Collected {
  events: AgentEvent[];
  result: RunResult;
}

export async function collect(stream: AgentStream): Promise<Collected> {
  const events: AgentEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, result: await stream.result() };
}

export function textTool(
  name: string,
  run: (args: Record<string, unknown>, signal: AbortSignal) => ToolOutput | Promise<ToolOutput>,
  flags: Partial<Pick<Tool, "readOnly" | "exclusive" | "external" | "timeoutMs" | "parameters">> = {},
): Tool {
  return {
    name,
    description: `test tool ${name}`,
    parameters: flags.parameters ?? { type: "object", properties: { path: { type: "string" } } },
    ...flags,
    execute: async (args, _ctx, signal) => run(args, signal),
  };
}

/** The chat-format messages of a recorded request. */
export function wireMessages(request: RecordedRequest | undefined): Record<string, unknown>[] {
  return (request?.body.messages as Record<string, unknown>[] | undefined) ?? [];
}

export async function tempDir(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "nanobot-engine-"));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
