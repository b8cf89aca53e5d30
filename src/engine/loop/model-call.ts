/**
 * One LLM call as the loop sees it: compaction check, governance on a copy, request hooks, the
 * streamed call with deltas forwarded, response hooks, usage, and one compact-and-retry when
 * the provider reports a context overflow.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AbortedError, ContextOverflowError, errorMessage } from "../../core/errors.js";
import type { LanguageModel, LLMRequest, ModelResponse, ToolDefinition } from "../../core/llm.js";
import type { Message } from "../../core/messages.js";
import { onAbort } from "../../core/on-abort.js";
import { ToolRegistry } from "../../tools/registry.js";
import type { Tool } from "../../tools/tool.js";
import { compactHistory, shouldCompact } from "../compaction/compact.js";
import { governContext, type GovernResult } from "../governance/govern.js";
import type { PendingWrite } from "../governance/offload.js";
import { estimateMessages } from "../tokens/estimator.js";
import type { AgentSpec } from "../types.js";
import { addUsage, hookContext, warn, type RunState } from "./run-state.js";
import { tracedModelCall } from "./model-span.js";

export interface AskOptions {
  /** Send no tools (finalization, "please answer"). */
  noTools?: boolean;
  /** Request-only messages appended after the governed history. */
  extra?: readonly Message[];
}

function historyEstimate(state: RunState): number {
  return historyEstimateOf(state, state.working);
}

function historyEstimateOf(state: RunState, messages: readonly Message[], adjustment = state.adjustment): number {
  return estimateMessages(state.estimator, messages) + state.estimator.tools(state.toolDefs) + adjustment;
}

/**
 * The history's estimate when it is over 83.5 % of the window and compaction has not failed
 * this run (or, `force`d, whenever there is a window); undefined when there is nothing to do.
 * `estimate`: the history's estimate when the caller has just made it. Synchronous, so a request
 * that needs no compaction awaits nothing for it.
 */
function compactionDue(state: RunState, force: boolean, estimate?: number): number | undefined {
  const { contextWindow } = state.settings;
  if (contextWindow <= 0 || (!force && state.compactionFailed)) return undefined;
  const before = estimate ?? historyEstimate(state);
  return force || shouldCompact(before, contextWindow) ? before : undefined;
}

/** Summarises the history (see `compactionDue`); `before`: its estimate now. */
async function compactNow(state: RunState, before: number): Promise<boolean> {
  const { contextWindow } = state.settings;
  let outcome = await compactHistory({
    model: state.model,
    messages: state.working,
    turnStart: state.turnStart,
    maxTokens: state.settings.maxTokens,
    signal: state.signal,
  });
  // A long run can outgrow the window on its own. After its first round Go summarises
  // everything, this run's rounds included (its next input is empty then); do the same when
  // summarising the earlier history did not suffice.
  const stillOver = (): boolean =>
    !outcome.ok ? outcome.error === undefined && outcome.reason !== "summary was empty" : shouldCompact(historyEstimateOf(state, outcome.messages, 0), contextWindow);
  if (state.iterations > 1 && stillOver()) {
    const whole = await compactHistory({
      model: state.model,
      messages: outcome.ok ? outcome.messages : state.working,
      turnStart: outcome.ok ? outcome.messages.length : state.working.length,
      maxTokens: state.settings.maxTokens,
      signal: state.signal,
    });
    if (whole.ok) {
      // The first pass's summary was only a step: its messages are archived, it is not kept.
      const first = outcome.ok ? outcome : undefined;
      if (first) state.archived.push(...first.archived);
      outcome = { ...whole, archived: whole.archived.filter((m) => m !== first?.summaryMessage) };
    } else if (!outcome.ok) {
      outcome = whole;
    }
  }
  if (!outcome.ok) {
    if (outcome.error !== undefined || outcome.reason === "summary was empty") state.compactionFailed = true;
    state.log("warn", `compaction skipped: ${outcome.reason}`, outcome.error ? { error: errorMessage(outcome.error) } : undefined);
    if (outcome.error !== undefined) warn(state, `compaction failed: ${errorMessage(outcome.error)}`);
    return false;
  }
  state.working = outcome.messages;
  state.turnStart = outcome.turnStart;
  state.archived.push(...outcome.archived);
  state.newMessages.push(outcome.summaryMessage);
  // The provider's count described the old history; it says nothing about the new one.
  state.adjustment = 0;
  state.emit({ type: "compaction", kind: "summary", before, after: historyEstimate(state), summary: outcome.summary });
  return true;
}

async function writeOffloads(state: RunState, writes: readonly PendingWrite[]): Promise<void> {
  for (const w of writes) {
    if (state.writtenFiles.has(w.path)) continue;
    try {
      await mkdir(dirname(w.path), { recursive: true });
      await writeFile(w.path, w.content, "utf8");
      state.writtenFiles.add(w.path);
    } catch (err) {
      warn(state, `could not save offloaded tool result to ${w.path}: ${errorMessage(err)}`);
    }
  }
}

/** The history governed for the next request (offloaded tool results still to be written). */
function governRequest(state: RunState, tools: ToolDefinition[] | undefined): GovernResult {
  return governContext(state.working, {
    estimator: state.estimator,
    budget: state.settings.budget,
    maxToolResultChars: state.settings.maxToolResultChars,
    outputDir: state.spec.outputDir,
    toolTokens: tools ? state.estimator.tools(tools) : 0,
    adjustment: state.adjustment,
  });
}

/** The request for governed messages; reports what governance compacted. */
function buildRequest(state: RunState, options: AskOptions, governed: GovernResult, tools: ToolDefinition[] | undefined): { request: LLMRequest; estimate: number } {
  const { stats } = governed;
  if (stats.microcompacted > 0) {
    state.emit({ type: "compaction", kind: "microcompact", before: stats.tokensBefore, after: stats.tokensAfter });
  }
  if (stats.snipped > 0) state.emit({ type: "compaction", kind: "snip", before: stats.tokensBefore, after: stats.tokensAfter });
  const spec = state.spec;
  const request: LLMRequest = { messages: options.extra?.length ? governed.messages.concat(options.extra) : governed.messages };
  if (tools) {
    request.tools = tools;
    // Forcing a tool choice after round 1 makes the model call tools forever.
    if (state.iterations === 1 && spec.toolChoice) request.toolChoice = spec.toolChoice;
  }
  if (!spec.omitMaxTokens) request.maxTokens = state.settings.maxTokens;
  if (spec.temperature !== undefined) request.temperature = spec.temperature;
  if (spec.topP !== undefined) request.topP = spec.topP;
  if (spec.reasoningEffort) request.reasoningEffort = spec.reasoningEffort;
  if (spec.reasoningSummary) request.reasoningSummary = spec.reasoningSummary;
  if (spec.truncation) request.truncation = spec.truncation;
  if (spec.output) request.output = spec.output;
  if (spec.metadata) request.metadata = spec.metadata;
  return { request, estimate: stats.tokensAfter - state.adjustment };
}

/** Definitions with `toolExtensions` attached; one array per definitions array, so wire forms stay cached. */
const extended = new WeakMap<readonly ToolDefinition[], ToolDefinition[]>();
function withExtensions(defs: ToolDefinition[], extensions: AgentSpec["toolExtensions"]): ToolDefinition[] {
  if (!extensions || Object.keys(extensions).length === 0) return defs;
  let out = extended.get(defs);
  if (!out) {
    out = defs.map((d) => (extensions[d.name] ? { ...d, extensions: extensions[d.name] } : d));
    extended.set(defs, out);
  }
  return out;
}

/** Streams one model call, forwarding deltas; resolves with the (hook-adjusted) response. */
async function callModel(state: RunState, request: LLMRequest): Promise<ModelResponse> {
  if (state.hooks.has("beforeIteration") || state.hooks.has("afterResponse")) return callModelWithHooks(state, request);
  const response = await tracedModelCall(state.model, request, () => streamModel(state, request));
  addUsage(state, response.usage);
  return response;
}

async function callModelWithHooks(state: RunState, request: LLMRequest): Promise<ModelResponse> {
  const ctx = hookContext(state);
  let shortCircuit: ModelResponse | undefined;
  await state.hooks.each(
    "beforeIteration",
    (h) => h.beforeIteration?.(ctx, request),
    (value) => {
      const v = value as { request?: LLMRequest; response?: ModelResponse; tools?: readonly Tool[]; model?: LanguageModel; refusedTools?: Readonly<Record<string, string>> };
      if (v.request) request = v.request;
      if (v.model) state.model = v.model;
      if (v.response && !shortCircuit) shortCircuit = v.response;
      if (v.tools) {
        state.registry = new ToolRegistry(v.tools);
        state.toolDefs = state.registry.definitions();
      }
      if (v.refusedTools) state.refused = { ...state.refused, ...v.refusedTools };
    },
  );
  let response = shortCircuit ?? (await tracedModelCall(state.model, request, () => streamModel(state, request)));
  await state.hooks.each(
    "afterResponse",
    (h) => h.afterResponse?.(ctx, response),
    (value) => {
      const v = value as Partial<ModelResponse>;
      if (v.message && v.finishReason) response = v as ModelResponse;
    },
  );
  if (!shortCircuit) addUsage(state, response.usage);
  return response;
}

async function streamModel(state: RunState, request: LLMRequest): Promise<ModelResponse> {
  const ctx = hookContext(state);
  const stream = state.model.stream(request, state.signal);
  // Each event as the provider pushes it: no promise per delta.
  stream
    .pipe((event) => {
      if (event.type === "text_delta") {
        state.emit({ type: "text_delta", delta: event.delta });
        state.hooks.delta(ctx, { kind: "text", delta: event.delta });
      } else if (event.type === "reasoning_delta") {
        state.emit({ type: "reasoning_delta", delta: event.delta });
        state.hooks.delta(ctx, { kind: "reasoning", delta: event.delta });
      } else if (event.type === "retry_wait") {
        state.emit({ type: "retry_wait", attempt: event.attempt, delayMs: event.delayMs, error: event.error });
      } else if (event.type === "fallback") {
        state.emit({ type: "warning", message: `model fallback ${event.from} → ${event.to}: ${event.error}` });
      }
    })
    .catch(() => undefined);
  // A provider that ignores the signal must not keep an aborted run waiting.
  const signal = state.signal;
  if (!signal) return stream.result();
  let stopWatching = (): void => undefined;
  const response = new Promise<ModelResponse>((resolve, reject) => {
    stopWatching = onAbort(signal, () => reject(new AbortedError(undefined, { cause: signal.reason })));
    stream.result().then(resolve, reject);
  });
  try {
    return await response;
  } finally {
    stopWatching();
  }
}

/** Below this share of the window the rough estimate is close enough to govern by. */
const ROUGH_ESTIMATE_SHARE = 0.25;

/**
 * Exact counts need the tokenizer's tables: 0.1–0.4 s to load and 35 MiB (cl100k) to 60 MiB
 * (o200k) of memory for the rest of the process. Well inside the window the ~4 chars/token
 * estimate, corrected by the prompt tokens the provider reports after each answer, governs
 * safely, so a conversation loads them only once it may be near the window. Checked before
 * every request, so a turn whose tool results carry it past the share waits for exact counts.
 * `roughEstimateWithinShare` gives the history's estimate when the rough one is enough, and
 * `loadEstimator` loads the tables otherwise (see `ask`).
 */
function roughEstimateWithinShare(state: RunState): number | undefined {
  const { contextWindow } = state.settings;
  if (contextWindow <= 0) return undefined;
  const rough = historyEstimate(state);
  return rough < contextWindow * ROUGH_ESTIMATE_SHARE ? rough : undefined;
}

async function loadEstimator(state: RunState): Promise<void> {
  try {
    await state.estimator.load();
  } catch (err) {
    unloadable.add(state.estimator); // said once, not before every request that follows
    warn(state, `token estimator unavailable, using a rough estimate: ${errorMessage(err)}`);
  }
}

/** Estimators whose tokenizer failed to load: they stay on the rough estimate. */
const unloadable = new WeakSet<object>();

/** Governs, sends and returns one response; on context overflow compacts and retries once. */
export async function ask(state: RunState, options: AskOptions = {}): Promise<ModelResponse> {
  state.iterations++;
  // The awaits below happen only when there is work: most requests need neither.
  let estimate: number | undefined;
  const { estimator } = state;
  if (!estimator.ready && !unloadable.has(estimator)) {
    estimate = roughEstimateWithinShare(state);
    if (estimate === undefined) await loadEstimator(state);
  }
  const due = compactionDue(state, false, estimate);
  if (due !== undefined) await compactNow(state, due);
  for (let attempt = 0; ; attempt++) {
    const tools = options.noTools || state.toolDefs.length === 0 ? undefined : withExtensions(state.toolDefs, state.spec.toolExtensions);
    const governed = governRequest(state, tools);
    if (governed.writes.length > 0) await writeOffloads(state, governed.writes);
    const { request, estimate: requestEstimate } = buildRequest(state, options, governed, tools);
    state.emit({
      type: "llm_request",
      iteration: state.iterations,
      messageCount: request.messages.length,
      estimatedTokens: requestEstimate + state.adjustment,
      toolCount: request.tools?.length ?? 0,
    });
    try {
      const response = await callModel(state, request);
      if (response.usage.promptTokens > 0) state.adjustment = response.usage.promptTokens - requestEstimate;
      return response;
    } catch (err) {
      if (!(err instanceof ContextOverflowError) || attempt > 0) throw err;
      warn(state, "the provider reported a context overflow; compacting and retrying once");
      const forced = compactionDue(state, true);
      if (forced !== undefined) await compactNow(state, forced);
    }
  }
}
