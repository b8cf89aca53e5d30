/**
 * One round of tool calls: prepare each in call order, run the runnable ones in batches
 * (concurrency-safe neighbours together), apply timeouts, turn failures into error results,
 * truncate oversized output, and stop cleanly on abort. Results come back in call order.
 */
import type { AgentEvent } from "../../core/events.js";
import { ToolTimeoutError, errorMessage } from "../../core/errors.js";
import { messageId } from "../../core/ids.js";
import { onAbort } from "../../core/on-abort.js";
import type { ToolCallPart, ToolMessage } from "../../core/messages.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { ToolContext, ToolOutput } from "../../tools/tool.js";
import type { HookContext, HookRunner } from "../hooks.js";
import type { Clock } from "../types.js";
import { partitionBatches } from "./batching.js";
import type { LookupGuard } from "./lookup-guard.js";
import { errorResult, prepareCall, type PreparedCall } from "./prepare.js";
import { exceedsOutputLimit, truncateLargeOutput } from "./truncate.js";
import { withSpan } from "../../core/tracing/tracer.js";
import type { Span } from "../../core/tracing/tracer.js";

export const ERROR_HINT = "[Analyze the error above and try a different approach.]";
export const INTERRUPTED_TEXT = "Error: Task interrupted before this tool finished.";

export interface ToolRoundDeps {
  registry: ToolRegistry;
  guard: LookupGuard;
  hooks: HookRunner;
  hookContext: HookContext;
  /** Names refused with a reason instead of "not found" (AgentSpec.refusedTools). */
  refused?: Readonly<Record<string, string>>;
  emit: (event: AgentEvent) => void;
  clock: Clock;
  defaultTimeoutMs: number;
  /** Workspace, session key and output dir handed to every tool. */
  toolContext: Omit<ToolContext, "callId" | "progress">;
  outputDir?: string;
  signal?: AbortSignal;
  /** Called as each result is final, for progress checkpoints. */
  onResult?: (result: ToolMessage) => void;
}

export interface ToolRoundOutcome {
  /** One result per non-external call, in call order (interrupted ones included). */
  results: ToolMessage[];
  external: ToolCallPart[];
  aborted: boolean;
}

type RunnableCall = Extract<PreparedCall, { kind: "run" }>;

interface NormalisedOutput {
  content: ToolMessage["content"];
  isError: boolean;
  skipTruncation: boolean;
  suppressFinalReply: boolean;
}

function normaliseOutput(output: ToolOutput): NormalisedOutput {
  if (typeof output === "string") return { content: [{ type: "text", text: output }], isError: false, skipTruncation: false, suppressFinalReply: false };
  return {
    content: output.content,
    isError: output.isError === true,
    skipTruncation: output.skipTruncation === true,
    suppressFinalReply: output.suppressFinalReply === true,
  };
}

async function invokeWithTimeout(item: RunnableCall, deps: ToolRoundDeps): Promise<ToolOutput> {
  const { tool, call } = item;
  const timeoutMs = tool.timeoutMs ?? deps.defaultTimeoutMs;
  const controller = new AbortController();
  const stopWatching = onAbort(deps.signal, () => controller.abort(deps.signal?.reason));
  let timer: unknown;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = deps.clock.setTimeout(() => {
        const err = new ToolTimeoutError(tool.name, timeoutMs);
        controller.abort(err);
        reject(err);
      }, timeoutMs);
    });
    const context: ToolContext = {
      ...deps.toolContext,
      callId: call.id,
      progress: (progress, total, message) =>
        deps.emit({ type: "tool_progress", toolCallId: call.id, progress, total, message }),
    };
    const running = Promise.resolve().then(() => tool.execute(item.args, context, controller.signal));
    running.catch(() => undefined); // a late failure after a timeout is already reported
    return await Promise.race([running, timeout]);
  } finally {
    deps.clock.clearTimeout(timer);
    stopWatching();
  }
}

/** One call inside its `execute_tool <name>` span (GenAI semantic conventions). */
function runCall(item: RunnableCall, deps: ToolRoundDeps): Promise<ToolMessage> {
  const attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": item.call.name,
    "gen_ai.tool.call.id": item.call.id,
  };
  return withSpan(`execute_tool ${item.call.name}`, { attributes }, (span) => runCallIn(item, deps, span));
}

function outputMeta(truncatedPath: string | undefined, output: NormalisedOutput): NonNullable<ToolMessage["meta"]> {
  const meta: NonNullable<ToolMessage["meta"]> = {};
  if (truncatedPath) meta.truncatedOutputPath = truncatedPath;
  if (output.suppressFinalReply) meta.suppressFinalReply = true;
  // History offload (`maxToolResultChars`) must keep it whole too.
  if (output.skipTruncation) meta.skipTruncation = true;
  return meta;
}

async function runCallIn(item: RunnableCall, deps: ToolRoundDeps, span: Span | undefined): Promise<ToolMessage> {
  const { call } = item;
  let result: ToolMessage;
  try {
    const output = normaliseOutput(await invokeWithTimeout(item, deps));
    const truncated: { content: ToolMessage["content"]; path?: string } =
      output.skipTruncation || !exceedsOutputLimit(output.content)
        ? { content: output.content }
        : await truncateLargeOutput(output.content, { toolName: call.name, callId: call.id, outputDir: deps.outputDir });
    result = {
      id: messageId(),
      role: "tool",
      toolCallId: call.id,
      toolName: call.name,
      content: truncated.content,
      isError: output.isError,
      createdAt: Date.now(),
    };
    // The product layer reads these: where the full output went, and "the tool already replied".
    if (truncated.path || output.suppressFinalReply || output.skipTruncation) result.meta = outputMeta(truncated.path, output);
  } catch (err) {
    span?.fail(err);
    const text = err instanceof ToolTimeoutError ? `Error: ${err.message}` : `Error: ${errorMessage(err)}`;
    result = errorResult(call, `${text}\n\n${ERROR_HINT}`);
  }
  await deps.hooks.each(
    "afterToolCall",
    (h) => h.afterToolCall?.(deps.hookContext, call, result),
    (value) => {
      const v = value as Partial<ToolMessage>;
      if (v.role === "tool" && Array.isArray(v.content)) result = v as ToolMessage;
    },
  );
  // A thrown failure already named its class; an error result the tool returned is `tool_error`.
  if (result.isError && span && !span.failed) span.fail(undefined, "tool_error");
  return result;
}

function abortPromise(signal: AbortSignal | undefined): { promise: Promise<"aborted">; dispose: () => void } {
  if (!signal) return { promise: new Promise(() => undefined), dispose: () => undefined };
  let dispose = (): void => undefined;
  const promise = new Promise<"aborted">((resolve) => {
    dispose = onAbort(signal, () => resolve("aborted"));
  });
  return { promise, dispose };
}

function isExternal(external: readonly ToolCallPart[], id: string): boolean {
  for (let i = 0; i < external.length; i++) if (external[i]!.id === id) return true;
  return false;
}

export async function executeToolRound(calls: readonly ToolCallPart[], deps: ToolRoundDeps): Promise<ToolRoundOutcome> {
  const slots: (ToolMessage | undefined)[] = new Array<ToolMessage | undefined>(calls.length);
  const external: ToolCallPart[] = [];
  const runnable: RunnableCall[] = [];
  const started = new Map<string, number>();
  const settle = (index: number, result: ToolMessage): void => {
    slots[index] = result;
    deps.emit({ type: "tool_result", result, durationMs: deps.clock.now() - (started.get(result.toolCallId) ?? deps.clock.now()) });
    deps.onResult?.(result);
  };

  // Indexed loops here and below: TurboFan compiles this function once it is hot, and iterators
  // with destructuring, or array callbacks, multiply the size of what it compiles.
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!;
    deps.emit({ type: "tool_call", toolCall: call });
    started.set(call.id, deps.clock.now());
    const prepared = await prepareCall(call, index, deps);
    if (prepared.kind === "done") settle(index, prepared.result);
    else if (prepared.kind === "external") external.push(call);
    else runnable.push(prepared);
  }

  const runAndSettle = async (item: RunnableCall): Promise<void> => {
    started.set(item.call.id, deps.clock.now());
    const result = await runCall(item, deps);
    if (!aborted) settle(item.index, result);
  };
  const abort = abortPromise(deps.signal);
  let aborted = deps.signal?.aborted === true;
  try {
    const batches = partitionBatches(runnable);
    for (let b = 0; b < batches.length && !aborted; b++) {
      const batch = batches[b]!;
      const running: Promise<void>[] = new Array<Promise<void>>(batch.length);
      for (let i = 0; i < batch.length; i++) running[i] = runAndSettle(batch[i]!);
      const work = Promise.all(running);
      work.catch(() => undefined);
      aborted = (await Promise.race([work, abort.promise])) === "aborted";
    }
  } finally {
    abort.dispose();
  }

  const results: ToolMessage[] = [];
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!;
    if (external.length > 0 && isExternal(external, call.id)) continue;
    let result = slots[index];
    if (!result) {
      result = errorResult(call, INTERRUPTED_TEXT);
      settle(index, result);
    }
    results.push(result);
  }
  return { results, external, aborted };
}
