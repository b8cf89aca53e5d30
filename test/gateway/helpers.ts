import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { Runtime } from "../../src/agent/runtime.js";
import type { TurnProcessor } from "../../src/agent/turn-processor.js";
import { resolveConfig } from "../../src/config/index.js";
import type { RunningGateway } from "../../src/gateway/runtime-gateway.js";
import { startRuntimeGateway } from "../../src/gateway/runtime-gateway.js";
import type { RuntimeGatewayOptions } from "../../src/gateway/runtime-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

export interface GatewayFixture {
  root: string;
  home: string;
  fake: FakeLLM;
  runtime: Runtime;
  running: RunningGateway;
  url: string;
  close(): Promise<void>;
}

export interface FixtureOptions extends RuntimeGatewayOptions {
  apiKey?: string;
  /** Extra config merged at the top level (e.g. named agents). */
  extra?: Record<string, unknown>;
  /** No provider at all. */
  noProvider?: boolean;
  /** Merged into `agents.defaults` (e.g. a small `contextWindowTokens`). */
  defaults?: Record<string, unknown>;
  /** Named agents, beside `agents.defaults`. */
  named?: Record<string, Record<string, unknown>>;
  /** Added to the Runtime's env (e.g. `NANOBOT_RETRY_SCALE: "0"`). */
  env?: Record<string, string>;
  /** Builds the processor over the fixture's Runtime (e.g. an AgentLoop); closed with `close` if it has `stop`. */
  makeProcessor?: (runtime: Runtime) => TurnProcessor & { stop?: () => Promise<void> };
}

/** A real gateway on 127.0.0.1:0 over a real Runtime whose provider is the scripted fake LLM. */
export async function startGatewayFixture(options: FixtureOptions = {}): Promise<GatewayFixture> {
  const root = await mkdtemp(join(tmpdir(), "nanobot-gateway-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  const fake = await startFakeLLM();
  const raw = {
    ...(options.noProvider ? {} : { providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-gateway-0001" } } }),
    agents: { defaults: { ...(options.noProvider ? {} : { model: "custom/test-model" }), workspace, ...options.defaults }, ...options.named },
    gateway: { host: "127.0.0.1", ...(options.apiKey ? { apiKey: options.apiKey } : {}) },
    ...options.extra,
  };
  const env = { HOME: root, NANOBOT_HOME: home, ...options.env };
  const { config } = resolveConfig(raw, { env, cwd: root });
  const runtime = new Runtime({ config, home, env });
  const processor = options.makeProcessor?.(runtime);
  const running = await startRuntimeGateway(runtime, { port: 0, ...options, ...(processor ? { processor } : {}) });
  return {
    root,
    home,
    fake,
    runtime,
    running,
    url: running.server.url,
    async close() {
      await processor?.stop?.();
      await running.close();
      await fake.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` is true (a condition, not a duration). */
export async function waitFor(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Both turn processors the gateway can run, for tests that must hold for each. */
export const TURN_PROCESSORS: Array<[string, FixtureOptions["makeProcessor"]]> = [
  ["the AgentLoop", (runtime: Runtime) => new AgentLoop({ runtime })],
  ["DirectTurnProcessor", undefined],
];

