/**
 * Hooks as MCP tools (Go nanobot): an agent's `hooks.config|request|response` name tools as
 * `server/tool`. Each receives the hook's JSON payload as its arguments and may return a
 * replacement (structured content, or JSON text); outputs chain in order. A failing hook is
 * reported as a warning and the chain goes on with the payload it was given.
 */
import type { LLMRequest, ModelResponse } from "../core/llm.js";
import { errorMessage } from "../core/errors.js";
import { messageId } from "../core/ids.js";
import type { AssistantContentPart } from "../core/messages.js";
import type { AgentHooks } from "../engine/hooks.js";
import type { ToolOutput } from "../tools/tool.js";
import type { McpClientManager } from "./manager.js";
import { parseToolRef } from "./names.js";

export type HookKind = "config" | "request" | "response";

/** The agent's `hooks` block as the config layer parses it. */
export type HooksConfig = Record<string, string | ReadonlyArray<string | Record<string, unknown>>>;

export type HookPayload = Record<string, unknown>;

export interface HookChainResult {
  payload: HookPayload;
  /** A `request` hook answered in place of the model (the payload's `response`). */
  shortCircuit?: unknown;
  warnings: string[];
}

/** The `server/tool` references configured for one hook kind. */
export function hookRefs(config: HooksConfig | undefined, kind: HookKind): string[] {
  const value = config?.[kind];
  if (value === undefined) return [];
  const list = typeof value === "string" ? [value] : value;
  return list
    .map((item) => {
      if (typeof item === "string") return item;
      const target = item.target ?? item.tool;
      return typeof target === "string" ? target : "";
    })
    .filter((ref) => ref !== "");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A hook's replacement payload, or undefined when it returned nothing to replace with. */
function replacementOf(output: Exclude<ToolOutput, string>): HookPayload | undefined {
  if (isRecord(output.structuredContent)) return output.structuredContent;
  const text = output.content
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("")
    .trim();
  if (text === "") return undefined;
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed)) throw new Error("returned JSON that is not an object");
  return parsed;
}

function outputText(output: Exclude<ToolOutput, string>): string {
  return output.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join(" ");
}

/** Runs the hooks in order, each on the previous one's output. */
export async function runHookChain(
  manager: McpClientManager,
  kind: HookKind,
  refs: readonly string[],
  payload: HookPayload,
  signal?: AbortSignal,
): Promise<HookChainResult> {
  const warnings: string[] = [];
  let current = payload;
  for (const raw of refs) {
    const ref = parseToolRef(raw);
    if (!ref.tool) {
      warnings.push(`${kind} hook '${raw}' is not a server/tool reference`);
      continue;
    }
    const output = await manager.callTool(ref.server, ref.tool, current, signal ? { signal } : {});
    if (output.isError) {
      warnings.push(`${kind} hook ${raw} failed: ${outputText(output)}`);
      continue;
    }
    try {
      current = replacementOf(output) ?? current;
    } catch (err) {
      warnings.push(`${kind} hook ${raw} returned an unusable result: ${errorMessage(err)}`);
      continue;
    }
    if (kind === "request" && current.response !== undefined && current.response !== null) {
      return { payload: current, shortCircuit: current.response, warnings };
    }
  }
  return { payload: current, warnings };
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
  const content = isRecord(value) && value.role === "assistant" ? value.content : isRecord(value) ? value.content : value;
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
 * Adapts `request` and `response` MCP hooks to the engine's `AgentHooks`. Request hooks get
 * `{ request }` and may replace it or add `response` (no model call); response hooks get
 * `{ request, response }` and may replace `response`. `config` hooks run in the product layer
 * (`runHookChain(manager, "config", …)`), since the engine never sees agent config.
 */
export function mcpHooks(manager: McpClientManager, config: HooksConfig | undefined, options: McpHooksOptions = {}): AgentHooks {
  const requestRefs = hookRefs(config, "request");
  const responseRefs = hookRefs(config, "response");
  const lastRequest = new Map<string, LLMRequest>();
  const report = (warnings: string[]): void => {
    for (const w of warnings) options.warn?.(w);
  };
  return {
    async beforeIteration(ctx, request) {
      lastRequest.set(ctx.runId, request);
      if (requestRefs.length === 0) return undefined;
      const result = await runHookChain(manager, "request", requestRefs, { request });
      report(result.warnings);
      const replaced = isRecord(result.payload.request) ? (result.payload.request as unknown as LLMRequest) : request;
      lastRequest.set(ctx.runId, replaced);
      if (result.shortCircuit !== undefined) {
        return { request: replaced, response: toModelResponse(result.shortCircuit, requestRefs.join(",")) };
      }
      return replaced === request ? undefined : { request: replaced };
    },
    async afterResponse(ctx, response) {
      if (responseRefs.length === 0) return undefined;
      const result = await runHookChain(manager, "response", responseRefs, { request: lastRequest.get(ctx.runId), response });
      report(result.warnings);
      const replaced = result.payload.response;
      return isRecord(replaced) && replaced !== (response as unknown) ? toModelResponse(replaced, responseRefs.join(",")) : undefined;
    },
    afterRun(ctx) {
      lastRequest.delete(ctx.runId);
    },
  };
}
