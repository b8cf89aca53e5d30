/**
 * `runAgent(spec, signal)`: the engine's entry point. Ask the model, run the tools it asks
 * for, feed the results back, until it answers without tools or a limit is reached. Returns
 * the event stream at once; the run starts on the next microtask.
 */
import { join } from "node:path";
import { agentErrorEvent, type AgentStream, type RunResult } from "../../core/events.js";
import { EventStream } from "../../core/event-stream.js";
import { isAbortError } from "../../core/errors.js";
import { runId as newRunId } from "../../core/ids.js";
import type { ModelResponse } from "../../core/llm.js";
import { assistantMessage, textOf, toolCallsOf } from "../../core/message-helpers.js";
import type { AssistantMessage, Message, ToolCallPart, ToolMessage } from "../../core/messages.js";
import { ToolRegistry } from "../../tools/registry.js";
import { HookRunner, type AgentHooks } from "../hooks.js";
import { executeToolRound, type ToolRoundDeps } from "../tool-execution/execute.js";
import { LookupGuard } from "../tool-execution/lookup-guard.js";
import { sharedTokenEstimator } from "../tokens/estimator.js";
import { ENGINE_DEFAULTS, systemClock, type AgentSpec } from "../types.js";
import { MAX_LENGTH_CONTINUATIONS, answerRequest, continueRequest, finalizeRequest, partialAnswer, schemaRequest } from "./endings.js";
import { validateStructuredOutput } from "../../providers/structured-output.js";
import { ask } from "./model-call.js";
import { addMessage, buildResult, checkpoint, drainInjections, hookContext, warn, type RunState } from "./run-state.js";

function defaultTurnStart(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return i;
  return messages.length;
}

function createState(spec: AgentSpec, signal: AbortSignal | undefined, stream: AgentStream): RunState {
  const model = spec.model;
  const contextWindow = spec.contextWindow ?? model.contextWindow ?? ENGINE_DEFAULTS.contextWindow;
  const maxTokens = spec.maxTokens ?? ENGINE_DEFAULTS.maxTokens;
  const registry = spec.tools instanceof ToolRegistry ? spec.tools : new ToolRegistry(spec.tools ?? []);
  const hooks: readonly AgentHooks[] = spec.hooks === undefined ? [] : Array.isArray(spec.hooks) ? spec.hooks : [spec.hooks as AgentHooks];
  const clock = spec.clock ?? systemClock;
  const log = spec.log ?? (() => undefined);
  const emit = stream.push.bind(stream);
  const warnEvent = (message: string): void => {
    log("warn", message);
    emit({ type: "warning", message });
  };
  return {
    runId: newRunId(),
    spec,
    model,
    settings: {
      maxToolIterations: spec.maxToolIterations ?? ENGINE_DEFAULTS.maxToolIterations,
      maxToolResultChars: spec.maxToolResultChars ?? ENGINE_DEFAULTS.maxToolResultChars,
      contextWindow,
      maxTokens,
      // An unknown window (≤ 0) means no budget to enforce, unless a block limit is given.
      budget: spec.contextBlockLimit ?? (contextWindow > 0 ? contextWindow - maxTokens - ENGINE_DEFAULTS.budgetReserve : Infinity),
      toolTimeoutMs: spec.toolTimeoutMs ?? ENGINE_DEFAULTS.toolTimeoutMs,
    },
    registry,
    toolDefs: registry.definitions(),
    refused: spec.refusedTools,
    hooks: new HookRunner(hooks, warnEvent, clock, spec.hookTimeoutMs ?? ENGINE_DEFAULTS.hookTimeoutMs),
    estimator: spec.estimator ?? sharedTokenEstimator(model.model),
    clock,
    guard: new LookupGuard(),
    signal,
    emit,
    log,
    working: [...spec.messages],
    turnStart: spec.newInputStart ?? defaultTurnStart(spec.messages),
    newMessages: [],
    archived: [],
    toolsUsed: new Set(),
    usage: { promptTokens: 0, completionTokens: 0 },
    iterations: 0,
    toolRounds: 0,
    injectionCycles: 0,
    injectionBacklog: [],
    adjustment: 0,
    compactionFailed: false,
    writtenFiles: new Set(),
  };
}

/** What a tool round needs from the run (kept out of runToolRound: see its note). */
function toolRoundDeps(state: RunState): ToolRoundDeps {
  const { spec } = state;
  const toolContext: ToolRoundDeps["toolContext"] = { workspace: spec.workspace ?? process.cwd(), turnId: state.runId };
  if (spec.sessionKey) toolContext.sessionKey = spec.sessionKey;
  if (spec.outputDir) toolContext.outputDir = join(spec.outputDir, "truncated-outputs");
  const deps: ToolRoundDeps = {
    registry: state.registry,
    guard: state.guard,
    hooks: state.hooks,
    hookContext: hookContext(state),
    emit: state.emit,
    clock: state.clock,
    defaultTimeoutMs: state.settings.toolTimeoutMs,
    toolContext,
    outputDir: spec.outputDir,
    signal: state.signal,
  };
  if (state.refused) deps.refused = state.refused;
  return deps;
}

function firstError(results: readonly ToolMessage[]): ToolMessage | undefined {
  for (let i = 0; i < results.length; i++) if (results[i]!.isError) return results[i];
  return undefined;
}

/**
 * Runs tool calls of one assistant message; returns a result when the run must end here.
 * Every turn with tools passes here, so V8 optimizes it early: plain loops and helpers keep what
 * it compiles small (array callbacks and spreads are inlined into the compiled code).
 */
async function runToolRound(state: RunState, assistant: AssistantMessage, calls: ToolCallPart[]): Promise<RunResult | undefined> {
  addMessage(state, assistant);
  state.toolRounds++;
  for (let i = 0; i < calls.length; i++) if (state.registry.has(calls[i]!.name)) state.toolsUsed.add(calls[i]!.name);
  await checkpoint(state, "awaiting_tools", { assistant, completedResults: [], pendingToolCalls: calls });
  const outcome = await executeToolRound(calls, toolRoundDeps(state));
  const results = outcome.results;
  for (let i = 0; i < results.length; i++) addMessage(state, results[i]!);
  if (outcome.aborted) return buildResult(state, "aborted", "");
  if (outcome.external.length > 0) return buildResult(state, "external_tool", "", { externalToolCalls: outcome.external });
  await checkpoint(state, "tools_completed", { assistant, completedResults: results, pendingToolCalls: [] });
  const failed = state.spec.failOnToolError ? firstError(results) : undefined;
  if (failed) return stopOnToolError(state, failed);
  await drainInjections(state);
  return undefined;
}

/** agents.defaults.failOnToolError (the Python nanobot's key): the turn ends here, saying why. */
async function stopOnToolError(state: RunState, failed: ToolMessage): Promise<RunResult> {
  const detail = textOf(failed).split("\n")[0] ?? "";
  const content = `Stopped: the ${failed.toolName} tool failed${detail ? `: ${detail}` : ""}`;
  addMessage(state, assistantMessage(content));
  await checkpoint(state, "final_response");
  return buildResult(state, "tool_error", content);
}

/**
 * The final assistant message: the response itself, or one message joining continuations.
 * Tool calls are stripped: a final answer has none (a no-tools request may still return some).
 */
function finalMessage(response: ModelResponse, first: AssistantMessage | undefined, text: string): AssistantMessage {
  const own = response.message.content.filter((p) => p.type !== "toolCall");
  if (!first) return own.length === response.message.content.length ? response.message : { ...response.message, content: own };
  const reasoning = first.content.filter((p) => p.type === "reasoning");
  return { ...response.message, content: [...reasoning, { type: "text", text }] };
}

/** `partial`: text of a `length`-cut answer the limit interrupted, so the summary can build on it. */
async function finalize(state: RunState, partial = ""): Promise<RunResult> {
  const extra = partial ? [partialAnswer(partial), finalizeRequest()] : [finalizeRequest()];
  const response = await ask(state, { noTools: true, extra });
  const text = textOf(response.message);
  if (text.trim()) addMessage(state, finalMessage(response, undefined, text));
  await checkpoint(state, "final_response");
  return buildResult(state, "max_iterations", text);
}

/** Recovery bookkeeping of the answer being formed; reset whenever a round completes. */
interface Pending {
  /** Request-only messages for the next call (continuation or "please answer"). */
  extra: Message[];
  noTools: boolean;
  emptyAnswers: number;
  /** Text of `length`-cut replies so far, and the first of them (for its reasoning). */
  partial: string;
  firstPartial: AssistantMessage | undefined;
  continuations: number;
  /** A structured answer that failed its schema was sent back once for correction. */
  schemaRetried: boolean;
}

const freshPending = (): Pending => ({
  extra: [],
  noTools: false,
  emptyAnswers: 0,
  partial: "",
  firstPartial: undefined,
  continuations: 0,
  schemaRetried: false,
});

/** Checks a final answer against the requested output schema; undefined when it fits (or none was asked). */
function schemaProblem(state: RunState, content: string): string | undefined {
  const output = state.spec.output;
  if (!output) return undefined;
  const check = validateStructuredOutput(content, output.schema);
  return check.ok ? undefined : check.error;
}

async function loop(state: RunState): Promise<RunResult> {
  let p = freshPending();
  for (;;) {
    if (state.signal?.aborted) return buildResult(state, "aborted", "");
    // The limit counts model calls, as the Python nanobot's `max_iterations` does: a silent
    // retry, a `length` continuation or an injected message's round uses one up like a tool round.
    if (state.iterations >= state.settings.maxToolIterations) return finalize(state, p.partial);

    const response = await ask(state, { noTools: p.noTools, extra: p.extra });
    const calls = p.noTools ? [] : toolCallsOf(response.message);
    if (calls.length > 0) {
      const message = response.message;
      const assistant = p.partial ? { ...message, content: [{ type: "text" as const, text: p.partial }, ...message.content] } : message;
      p = freshPending();
      const ended = await runToolRound(state, assistant, calls);
      if (ended) return ended;
      continue;
    }

    const text = textOf(response.message);
    if (response.finishReason === "length" && text.trim()) {
      if (p.continuations < MAX_LENGTH_CONTINUATIONS) {
        p.partial += text;
        p.firstPartial ??= response.message;
        p.continuations++;
        p.extra = [partialAnswer(p.partial), continueRequest()];
        continue;
      }
      const content = p.partial + text;
      addMessage(state, finalMessage(response, p.firstPartial, content));
      await checkpoint(state, "final_response");
      return buildResult(state, "length", content);
    }

    const content = p.partial + text;
    if (!content.trim()) {
      p.emptyAnswers++;
      if (p.emptyAnswers === 1) continue; // one silent retry of the same request
      if (p.emptyAnswers === 2) {
        p.noTools = true;
        p.extra = [answerRequest()];
        continue;
      }
      await checkpoint(state, "final_response");
      return buildResult(state, "empty_final_response", "");
    }

    const problem = schemaProblem(state, content);
    if (problem !== undefined) {
      if (!p.schemaRetried) {
        p.schemaRetried = true;
        p.noTools = true;
        p.extra = [partialAnswer(content), schemaRequest(problem)];
        continue;
      }
      warn(state, `the final answer does not match the output schema: ${problem}`);
    }
    addMessage(state, finalMessage(response, p.firstPartial, content));
    p = freshPending();
    if (await drainInjections(state)) continue;
    await checkpoint(state, "final_response");
    return buildResult(state, "completed", content);
  }
}

async function run(state: RunState): Promise<RunResult> {
  const ctx = (): ReturnType<typeof hookContext> => hookContext(state);
  await state.hooks.each("beforeRun", (h) => h.beforeRun?.(ctx()));
  state.emit({ type: "turn_start", runId: state.runId, model: state.model.model, provider: state.model.provider });
  let result: RunResult;
  try {
    result = await loop(state);
  } catch (err) {
    if (isAbortError(err) || state.signal?.aborted) {
      result = buildResult(state, "aborted", "");
    } else {
      await state.hooks.each("onError", (h) => h.onError?.(ctx(), err));
      result = buildResult(state, "error", "", { error: err });
    }
  }
  await state.hooks.each("afterRun", (h) => h.afterRun?.(ctx(), result));
  state.emit({ type: "turn_end", result });
  return result;
}

/** Starts a run. Iterate the stream for events; `await stream.result()` for the outcome. */
export function runAgent(spec: AgentSpec, signal?: AbortSignal): AgentStream {
  return EventStream.run(agentErrorEvent, (stream: AgentStream) => run(createState(spec, signal, stream)));
}
