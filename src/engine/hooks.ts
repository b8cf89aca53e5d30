/**
 * In-process hooks: the seam MCP hooks (Go nanobot's config/request/response hooks, see
 * src/agent/go-hooks.ts) plug into. Hooks run in order and chain: each sees the previous one's replacement. A hook that
 * throws or does not settle in time is skipped and reported as a `warning`; it never breaks or
 * hangs the run.
 */
import type { RunResult } from "../core/events.js";
import type { LanguageModel, LLMRequest, ModelResponse } from "../core/llm.js";
import type { ToolCallPart, ToolMessage } from "../core/messages.js";
import { errorMessage } from "../core/errors.js";
import type { Tool } from "../tools/tool.js";
import type { Clock } from "./types.js";

export interface HookContext {
  runId: string;
  /** 1-based LLM round (0 before the first). */
  iteration: number;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * What `beforeIteration` may do: swap the request, answer without calling the model, or
 * replace the tools the run can execute from this round on (a Go `config` hook that changed
 * the agent's tools; the request's `tools` should then describe the same set), or the model
 * that answers from this round on (a Go `config` hook that changed the agent's model).
 * `refusedTools` names tools a call to which is refused with that reason instead of "not
 * found" from this round on (tools the new tool set leaves out).
 */
export interface BeforeIterationResult {
  request?: LLMRequest;
  response?: ModelResponse;
  tools?: readonly Tool[];
  model?: LanguageModel;
  refusedTools?: Readonly<Record<string, string>>;
}

/** What `beforeToolCall` may do: block the call (the reason goes to the model) or rewrite its arguments. */
export interface BeforeToolCallResult {
  block?: string;
  arguments?: Record<string, unknown>;
}

export interface AgentHooks {
  beforeRun?(ctx: HookContext): MaybePromise<void>;
  afterRun?(ctx: HookContext, result: RunResult): MaybePromise<void>;
  beforeIteration?(ctx: HookContext, request: LLMRequest): MaybePromise<BeforeIterationResult | void>;
  afterResponse?(ctx: HookContext, response: ModelResponse): MaybePromise<ModelResponse | void>;
  beforeToolCall?(ctx: HookContext, call: ToolCallPart): MaybePromise<BeforeToolCallResult | void>;
  afterToolCall?(ctx: HookContext, call: ToolCallPart, result: ToolMessage): MaybePromise<ToolMessage | void>;
  onError?(ctx: HookContext, error: unknown): MaybePromise<void>;
  onStreamDelta?(ctx: HookContext, delta: { kind: "text" | "reasoning"; delta: string }): void;
}

const TIMED_OUT = Symbol("hook-timeout");

/** Runs hooks with isolation; `warn` receives a line for every failed or stuck hook. */
export class HookRunner {
  constructor(
    private readonly hooks: readonly AgentHooks[],
    private readonly warn: (message: string) => void,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
  ) {}

  get empty(): boolean {
    return this.hooks.length === 0;
  }

  /** Whether any hook implements `name` (callers skip building a call nobody takes). */
  has(name: keyof AgentHooks): boolean {
    const hooks = this.hooks;
    for (let i = 0; i < hooks.length; i++) if (typeof hooks[i]![name] === "function") return true;
    return false;
  }

  /**
   * Calls `name` on every hook that has it; each result is passed to `fold`. Without such a hook
   * (the common case) it is done at once, with no async call behind it.
   */
  each<K extends keyof AgentHooks>(name: K, invoke: (hook: AgentHooks) => unknown, fold?: (value: unknown) => void): Promise<void> {
    return this.has(name) ? this.eachHook(name, invoke, fold) : Promise.resolve();
  }

  private async eachHook(name: keyof AgentHooks, invoke: (hook: AgentHooks) => unknown, fold?: (value: unknown) => void): Promise<void> {
    for (const hook of this.hooks) {
      if (typeof hook[name] !== "function") continue;
      const value = await this.guard(name, () => invoke(hook));
      if (value !== undefined && fold) fold(value);
    }
  }

  /** Stream deltas are synchronous and hot: no timeout, but still isolated. */
  delta(ctx: HookContext, delta: { kind: "text" | "reasoning"; delta: string }): void {
    for (const hook of this.hooks) {
      if (!hook.onStreamDelta) continue;
      try {
        const value: unknown = hook.onStreamDelta(ctx, delta);
        if (value instanceof Promise) value.catch((err: unknown) => this.warn(`hook onStreamDelta failed: ${errorMessage(err)}`));
      } catch (err) {
        this.warn(`hook onStreamDelta failed: ${errorMessage(err)}`);
      }
    }
  }

  private async guard(name: string, invoke: () => unknown): Promise<unknown> {
    let timer: unknown;
    try {
      const pending = Promise.resolve().then(invoke);
      const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
        timer = this.clock.setTimeout(() => resolve(TIMED_OUT), this.timeoutMs);
      });
      const value = await Promise.race([pending, timeout]);
      if (value === TIMED_OUT) {
        // The stuck hook may still settle later; its outcome is ignored either way.
        pending.catch(() => undefined);
        this.warn(`hook ${name} did not finish within ${this.timeoutMs} ms and was skipped`);
        return undefined;
      }
      return value;
    } catch (err) {
      this.warn(`hook ${name} failed: ${errorMessage(err)}`);
      return undefined;
    } finally {
      this.clock.clearTimeout(timer);
    }
  }
}
