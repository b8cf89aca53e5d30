/**
 * Agent hooks as MCP tool calls, as the Go nanobot runs them: an agent's `hooks` block maps
 * `config`, `request` and `response` (Go's key syntax, see hook-keys.ts) to `server/tool`
 * targets. Each target gets the payload as its arguments and may return a replacement
 * (structured content, or one text part holding a JSON object); the next target gets that.
 * A target that fails is a warning and the chain goes on with the payload it was given.
 *
 * Payloads (JSON):
 * - config:   `{ agent: {name, instructions, tools, permissions, …}, sessionId, mcpServers? }`
 * - request:  `{ request: {messages, tools, maxTokens, …} }` → may return `request` and/or `response`
 *             (a `response` answers in place of the model: no model call)
 * - response: `{ request, response: {message: {role: "assistant", content: [...]}, finishReason, …} }`
 */
import type { LLMRequest, ModelResponse } from "../core/llm.js";
import { errorMessage } from "../core/errors.js";
import { messageId } from "../core/ids.js";
import type { AssistantContentPart } from "../core/messages.js";
import type { AgentHooks } from "../engine/hooks.js";
import type { ToolOutput } from "../tools/tool.js";
import { hookMappings, matchingTargets } from "./hook-keys.js";
import type { HookMapping, HooksConfig } from "./hook-keys.js";
import { parseToolRef } from "./names.js";

export type { HooksConfig } from "./hook-keys.js";

export type HookKind = "config" | "request" | "response";

export type HookPayload = Record<string, unknown>;

/** Calls one MCP tool (`McpClientManager.callTool` fits); failures come back as `isError`. */
export type HookCaller = (server: string, tool: string, args: Record<string, unknown>, options: { signal?: AbortSignal }) => Promise<Exclude<ToolOutput, string>>;

export interface HookChainResult {
  payload: HookPayload;
  warnings: string[];
  /** Targets that ran and returned a replacement, in order. */
  changedBy: string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A hook's replacement payload, or undefined when it returned none. Like the Go nanobot, a
 * result with one text part that holds a JSON object counts as structured content.
 */
export function hookOutputObject(output: Exclude<ToolOutput, string>): Record<string, unknown> | undefined {
  if (isRecord(output.structuredContent)) return output.structuredContent;
  const texts = output.content.filter((p) => p.type === "text");
  if (texts.length !== 1) return undefined;
  try {
    const parsed: unknown = JSON.parse(texts[0]!.text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function hookOutputText(output: Exclude<ToolOutput, string>): string {
  return output.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join(" ");
}

/** The `server/tool` targets configured for one hook name (no parameters). */
export function hookRefs(config: HooksConfig | undefined, kind: string): string[] {
  return matchingTargets(hookMappings(config), kind).map((t) => t.target);
}

/** Runs the targets matching `name` in order, each on the previous one's output. */
export async function runHookChain(
  call: HookCaller,
  mappings: readonly HookMapping[],
  name: string,
  payload: HookPayload,
  options: { params?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<HookChainResult> {
  const warnings: string[] = [];
  const changedBy: string[] = [];
  let current = payload;
  for (const { target } of matchingTargets(mappings, name, options.params)) {
    const ref = parseToolRef(target);
    if (!ref.tool) {
      warnings.push(`${name} hook '${target}' is not a server/tool reference`);
      continue;
    }
    let output: Exclude<ToolOutput, string>;
    try {
      output = await call(ref.server, ref.tool, current, options.signal ? { signal: options.signal } : {});
    } catch (err) {
      if (options.signal?.aborted) throw err;
      warnings.push(`${name} hook ${target} failed: ${errorMessage(err)}`);
      continue;
    }
    if (output.isError) {
      warnings.push(`${name} hook ${target} failed: ${hookOutputText(output)}`);
      continue;
    }
    const replacement = hookOutputObject(output);
    if (replacement) {
      current = replacement;
      changedBy.push(target);
    }
  }
  return { payload: current, warnings, changedBy };
}

/**
 * A hook's answer as a model response. Accepts a full `ModelResponse`, an assistant message,
 * `{ content: string | parts }` or plain text, so hook authors can keep it short.
 */
export function toModelResponse(value: unknown, source: string): ModelResponse {
  const base = { finishReason: "stop" as const, usage: { promptTokens: 0, completionTokens: 0 }, provider: "mcp-hook", model: source };
  if (isRecord(value) && isRecord(value.message) && value.message.role === "assistant") {
    const message = { id: messageId(), ...value.message } as unknown as ModelResponse["message"];
    return { ...base, ...(value as Partial<ModelResponse>), message };
  }
  const content = isRecord(value) ? value.content : value;
  const parts: AssistantContentPart[] =
    typeof content === "string"
      ? [{ type: "text", text: content }]
      : Array.isArray(content)
        ? (content as AssistantContentPart[])
        : [{ type: "text", text: JSON.stringify(value) }];
  return { ...base, message: { role: "assistant", id: messageId(), content: parts } };
}

export interface McpHooksOptions {
  /** Receives one line per failed hook (the engine's `warning` event is a good sink). */
  warn?: (message: string) => void;
}

/**
 * Adapts `request` and `response` hooks to the engine's `AgentHooks`. Request hooks get
 * `{ request }` and may replace it or add `response` (then the model is not called); response
 * hooks get `{ request, response }` and may replace `response`. `config` hooks run in the
 * product layer (src/agent/go-hooks.ts), since the engine never sees agent config.
 */
export function mcpHooks(call: HookCaller, config: HooksConfig | undefined, options: McpHooksOptions = {}): AgentHooks {
  const mappings = hookMappings(config);
  const hasRequest = matchingTargets(mappings, "request").length > 0;
  const hasResponse = matchingTargets(mappings, "response").length > 0;
  const lastRequest = new Map<string, LLMRequest>();
  const report = (warnings: string[]): void => {
    for (const w of warnings) options.warn?.(w);
  };
  return {
    async beforeIteration(ctx, request) {
      lastRequest.set(ctx.runId, request);
      if (!hasRequest) return undefined;
      const result = await runHookChain(call, mappings, "request", { request });
      report(result.warnings);
      if (result.changedBy.length === 0) return undefined;
      const replaced = isRecord(result.payload.request) ? (result.payload.request as unknown as LLMRequest) : request;
      lastRequest.set(ctx.runId, replaced);
      const answer = result.payload.response;
      if (answer !== undefined && answer !== null) {
        return { request: replaced, response: toModelResponse(answer, result.changedBy.join(",")) };
      }
      return { request: replaced };
    },
    async afterResponse(ctx, response) {
      if (!hasResponse) return undefined;
      const result = await runHookChain(call, mappings, "response", { request: lastRequest.get(ctx.runId), response });
      report(result.warnings);
      const replaced = result.payload.response;
      if (result.changedBy.length === 0 || replaced === undefined || replaced === null) return undefined;
      if (JSON.stringify(replaced) === JSON.stringify(response)) return undefined;
      return toModelResponse(replaced, result.changedBy.join(","));
    },
    afterRun(ctx) {
      lastRequest.delete(ctx.runId);
    },
  };
}
