/**
 * Deciding what happens to each tool call before anything runs, in call order: malformed
 * arguments, unknown names, repeated lookups, schema violations and blocking hooks all become
 * error results for the model; external tools are handed back to the caller.
 */
import { messageId } from "../../core/ids.js";
import type { ToolCallPart, ToolMessage } from "../../core/messages.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { Tool } from "../../tools/tool.js";
import { validateArguments } from "../../tools/validate-args.js";
import type { HookContext, HookRunner } from "../hooks.js";
import type { LookupGuard } from "./lookup-guard.js";

export type PreparedCall =
  | { kind: "done"; index: number; call: ToolCallPart; result: ToolMessage }
  | { kind: "run"; index: number; call: ToolCallPart; tool: Tool; args: Record<string, unknown> }
  | { kind: "external"; index: number; call: ToolCallPart };

export function errorResult(call: ToolCallPart, text: string): ToolMessage {
  return {
    id: messageId(),
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    isError: true,
    createdAt: Date.now(),
  };
}

export interface PrepareDeps {
  registry: ToolRegistry;
  guard: LookupGuard;
  hooks: HookRunner;
  hookContext: HookContext;
  /** Names refused with a reason instead of "not found" (AgentSpec.refusedTools). */
  refused?: Readonly<Record<string, string>>;
}

export async function prepareCall(call: ToolCallPart, index: number, deps: PrepareDeps): Promise<PreparedCall> {
  const done = (text: string): PreparedCall => ({ kind: "done", index, call, result: errorResult(call, text) });
  if (call.parseError) {
    return done(`Error: unusable arguments for '${call.name}': ${call.parseError}. Send the call again with a valid JSON object.`);
  }
  const found = deps.registry.lookup(call.name);
  const refusal = found.ok ? undefined : deps.refused?.[call.name];
  if (refusal !== undefined) return done(`Error: Tool '${call.name}' is not available: ${refusal}. It is not offered to this agent; do not call it again.`);
  if (!found.ok) return done(found.error);
  const tool = found.tool;
  if (tool.external) return { kind: "external", index, call };

  let args = call.arguments;
  const blocked = deps.guard.check(call.name, args);
  if (blocked) return done(blocked);

  let blockReason: string | undefined;
  await deps.hooks.each(
    "beforeToolCall",
    (h) => h.beforeToolCall?.(deps.hookContext, { ...call, arguments: args }),
    (value) => {
      const v = value as { block?: unknown; arguments?: unknown };
      if (typeof v.block === "string" && blockReason === undefined) blockReason = v.block;
      if (typeof v.arguments === "object" && v.arguments !== null) args = v.arguments as Record<string, unknown>;
    },
  );
  if (blockReason !== undefined) return done(`Error: the call to '${call.name}' was blocked: ${blockReason}`);

  const problems = validateArguments(tool.parameters, args);
  if (problems.length > 0) {
    return done(
      `Error: invalid arguments for tool '${call.name}':\n${problems.map((p) => `- ${p}`).join("\n")}\nFix the arguments and call the tool again.`,
    );
  }
  return { kind: "run", index, call, tool, args };
}
