/**
 * Shared parts of the reliability suite: a real Runtime over a temp home whose only provider is
 * the scripted fake LLM, a capturing logger, and readers for what the fake was sent.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { Runtime } from "../../src/agent/runtime.js";
import { InProcessBus } from "../../src/bus/index.js";
import type { OutboundMessage } from "../../src/bus/index.js";
import { resolveConfig } from "../../src/config/index.js";
import type { Logger } from "../../src/core/logger.js";
import type { FakeLLM, RecordedRequest } from "../fakes/fake-llm-types.js";

export interface LogLine {
  level: string;
  msg: string;
  data?: Record<string, unknown>;
}

/** A Logger that keeps every line (the suite greps them for secrets and reasons). */
export function captureLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (msg: string, data?: Record<string, unknown>): void => {
      lines.push(data ? { level, msg, data } : { level, msg });
    };
  const logger: Logger = {
    trace: at("trace"),
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: () => logger,
  };
  return logger;
}

export interface RuntimeFixture {
  root: string;
  home: string;
  workspace: string;
  runtime: Runtime;
  logs: LogLine[];
  env: Record<string, string>;
  close(): Promise<void>;
}

export interface RuntimeFixtureOptions {
  /** Provider base URL; defaults to the fake's OpenAI base. */
  apiBase?: string;
  /** Extra top-level config merged over the defaults. */
  extra?: Record<string, unknown>;
  /** Extra `agents.defaults` fields. */
  defaults?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Reuse another fixture's home (same state.db), e.g. after a "restart". */
  home?: string;
}

/** Retries without waiting and a 300 ms stalled-stream limit (see `timingFromEnv`). */
export const FAST_TIMING_ENV: Record<string, string> = { NANOBOT_RETRY_SCALE: "0", NANOBOT_STREAM_IDLE_MS: "300" };

export async function startRuntime(fake: FakeLLM | undefined, options: RuntimeFixtureOptions = {}): Promise<RuntimeFixture> {
  const root = await mkdtemp(join(tmpdir(), "nanobot-rel-"));
  const home = options.home ?? join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  const env = { HOME: root, NANOBOT_HOME: home, ...FAST_TIMING_ENV, ...options.env };
  const apiBase = options.apiBase ?? fake?.openaiBaseURL ?? "http://127.0.0.1:9/v1";
  const raw = {
    providers: { custom: { apiBase, apiKey: "sk-test-SECRET-provider-0001" } },
    agents: { defaults: { model: "custom/test-model", workspace, providerRetryMode: "standard", ...options.defaults } },
    ...options.extra,
  };
  const { config } = resolveConfig(raw, { env, cwd: root, envProviders: false });
  const logs: LogLine[] = [];
  const runtime = new Runtime({ config, home, env, logger: captureLogger(logs) });
  return {
    root,
    home,
    workspace,
    runtime,
    logs,
    env,
    async close() {
      await runtime.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** The chat-completions messages of a recorded request. */
export function wireMessages(request: RecordedRequest | undefined): WireMessage[] {
  if (!request) throw new Error("no such request");
  return (request.body.messages ?? []) as WireMessage[];
}

export function wireText(m: WireMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content.map((p: unknown) => (p && typeof p === "object" && "text" in p ? String((p as { text: unknown }).text) : "")).join("");
  }
  return "";
}

/**
 * Problems that would make a provider refuse a chat-completions request: a tool result without
 * its call, a call without its result, or a tool message that does not follow its call.
 */
export function wireProblems(messages: readonly WireMessage[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === "assistant") {
      if (open.size > 0) problems.push(`#${i}: assistant before results of ${[...open].join(",")}`);
      open.clear();
      for (const c of m.tool_calls ?? []) open.add(c.id);
    } else if (m.role === "tool") {
      if (!m.tool_call_id || !open.has(m.tool_call_id)) problems.push(`#${i}: orphan tool result ${m.tool_call_id ?? "?"}`);
      else open.delete(m.tool_call_id);
    } else {
      if (open.size > 0) problems.push(`#${i}: ${m.role} before results of ${[...open].join(",")}`);
      open.clear();
    }
  }
  if (open.size > 0) problems.push(`end: calls without results ${[...open].join(",")}`);
  return problems;
}

/** The routing tests' agents: two named ones and none marked default, so the default is plain nanobot. */
export function namedAgents(otherInstructions: string): Record<string, unknown> {
  return {
    agents: {
      defaults: { model: "custom/test-model" },
      helper: { instructions: "You are HELPER.", model: "custom/test-model" },
      other: { instructions: otherInstructions, model: "custom/test-model" },
    },
  };
}

/** An in-process bus with every outbound message collected, and a started AgentLoop on it. */
export function startBusLoop(runtime: Runtime): { bus: InProcessBus; outbound: OutboundMessage[]; loop: AgentLoop } {
  const bus = new InProcessBus();
  const outbound: OutboundMessage[] = [];
  bus.subscribeOutbound((m) => {
    outbound.push(m);
  });
  const loop = new AgentLoop({ runtime, bus });
  loop.start();
  return { bus, outbound, loop };
}
