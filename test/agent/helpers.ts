/**
 * Test plumbing for the product layer: a temp home + workspace, the scripted fake LLM behind a
 * real Runtime (custom provider), an in-process bus whose outbound messages are collected, and
 * an AgentLoop over all of it. Extra test tools are appended to every agent profile.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import type { AgentLoopOptions } from "../../src/agent/agent-loop.js";
import { Runtime } from "../../src/agent/runtime.js";
import type { AgentProfile } from "../../src/agent/runtime.js";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import type { InboundMessage, OutboundMessage } from "../../src/bus/types.js";
import { resolveConfig } from "../../src/config/load.js";
import type { Tool } from "../../src/tools/tool.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, RecordedRequest } from "../fakes/fake-llm-types.js";

class TestRuntime extends Runtime {
  extraTools: Tool[] = [];

  override async resolveAgent(name?: string, overrides: { modelRef?: string } = {}): Promise<AgentProfile> {
    const profile = await super.resolveAgent(name, overrides);
    return { ...profile, tools: [...profile.tools, ...this.extraTools] };
  }
}

export interface LoopHarness {
  root: string;
  home: string;
  workspace: string;
  fake: FakeLLM;
  runtime: TestRuntime;
  bus: InProcessBus;
  loop: AgentLoop;
  outbound: OutboundMessage[];
  /** Publishes a chat message from `telegram:<chatId>`. */
  send(content: string, options?: { chatId?: string; id?: string; metadata?: Record<string, unknown> }): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  defaults?: Record<string, unknown>;
  config?: Record<string, unknown>;
  tools?: Tool[];
  loop?: Partial<AgentLoopOptions>;
  env?: Record<string, string>;
  start?: boolean;
  /** The bus to run on (a channel's, so replies reach its platform); a new one by default. */
  bus?: InProcessBus;
}

let counter = 0;

export async function createHarness(options: HarnessOptions = {}): Promise<LoopHarness> {
  const root = await mkdtemp(join(tmpdir(), "nanobot-agent-"));
  const home = join(root, "home");
  const workspace = join(root, "workspace");
  await mkdir(workspace, { recursive: true });
  const fake = await startFakeLLM();
  const env = { HOME: root, NANOBOT_HOME: home, PATH: join(root, "bin"), ...options.env };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-agent-loop-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace, ...options.defaults } },
      ...options.config,
    },
    { env, cwd: root, envProviders: false },
  );
  const runtime = new TestRuntime({ config, home, env });
  runtime.extraTools = options.tools ?? [];
  const bus = options.bus ?? new InProcessBus();
  const outbound: OutboundMessage[] = [];
  bus.subscribeOutbound((m) => {
    outbound.push(m);
  });
  const loop = new AgentLoop({ runtime, bus, builtinSkillsDir: join(root, "builtin-skills"), ...options.loop });
  if (options.start !== false) loop.start();
  return {
    root,
    home,
    workspace,
    fake,
    runtime,
    bus,
    loop,
    outbound,
    async send(content, opts = {}) {
      const message: InboundMessage = {
        id: opts.id ?? `in-${++counter}`,
        channel: "telegram",
        chatId: opts.chatId ?? "42",
        senderId: "user-1",
        content,
        receivedAt: Date.now(),
        ...(opts.metadata ? { metadata: opts.metadata } : {}),
      };
      await bus.publishInbound(message);
    },
    async close() {
      await loop.stop();
      await runtime.close();
      await fake.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls `condition` until true (fails after `timeoutMs`). */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error("waitFor: condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A tool that blocks until `release()` (or the turn is aborted), so tests control turn timing. */
export function gateTool(name = "wait_here"): { tool: Tool; started: Promise<void>; release: (text?: string) => void; calls: number } {
  let onStart: () => void = () => undefined;
  let onRelease: (text: string) => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  const released = new Promise<string>((resolve) => (onRelease = resolve));
  const state = {
    calls: 0,
    started,
    release: (text = "gate opened") => onRelease(text),
    tool: {
      name,
      description: "waits for the test",
      parameters: { type: "object", properties: {} },
      execute: async (_args: Record<string, unknown>, _ctx: unknown, signal: AbortSignal) => {
        state.calls++;
        onStart();
        const aborted = new Promise<string>((resolve) => signal.addEventListener("abort", () => resolve("aborted"), { once: true }));
        return Promise.race([released, aborted]);
      },
    } satisfies Tool,
  };
  return state;
}

/** Chat-format messages of a recorded request as `[role, text]`. */
export function roles(request: RecordedRequest | undefined): Array<[string, string]> {
  const messages = (request?.body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  return messages.map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content)]);
}

export function finalMessages(outbound: readonly OutboundMessage[]): Array<Extract<OutboundMessage, { kind: "message" }>> {
  return outbound.filter((m): m is Extract<OutboundMessage, { kind: "message" }> => m.kind === "message");
}
