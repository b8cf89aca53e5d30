/**
 * MCP message hooks (Go nanobot): `mcpServers.<x>.hooks` maps JSON-RPC methods (Go's key
 * syntax: `tools/call?direction=request&name=delete_file`, `*`, `!mutate:`) to hook tools that
 * see each `tools/call` to and from that server. A hook tool gets
 *   `{ accept: true, mutated: false, message: {jsonrpc, id, method, params | result}, reason: "" }`
 * and answers with the same shape: `accept: false` rejects the message (the model gets the
 * reason as the tool's error), `mutated: true` with a `message` replaces it. What was changed
 * is recorded in the result's `_meta["ai.nanobot.hooks/mutations"]` and logged. A hook tool that fails
 * rejects the message, as in the Go nanobot: a policy that cannot be checked does not pass.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { hookMappings, matchingTargets } from "./hook-keys.js";
import type { HooksConfig } from "./hook-keys.js";
import { hookOutputObject, hookOutputText } from "./hooks.js";
import type { HookCaller } from "./hooks.js";
import { parseToolRef } from "./names.js";
import type { McpLogFn } from "./types.js";

export const HOOK_MUTATIONS_META_KEY = "ai.nanobot.hooks/mutations";

interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
}

interface Mutation {
  mutated: boolean;
  reasons?: string[];
}

interface HookState {
  accept: boolean;
  mutated: boolean;
  message: JsonRpcMessage;
  reason: string;
}

export interface MessageHookOutcome {
  message: JsonRpcMessage;
  rejection?: string;
  mutation?: Mutation;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Runs the hooks matching one message; the first rejection wins, mutations chain. */
export async function runMessageHooks(
  call: HookCaller,
  hooks: HooksConfig,
  message: JsonRpcMessage,
  params: { method: string; name: string; direction: "request" | "response"; callOnError: boolean },
  signal?: AbortSignal,
): Promise<MessageHookOutcome> {
  const targets = matchingTargets(hookMappings(hooks), params.method, {
    method: params.method,
    name: params.name,
    direction: params.direction,
    callOnError: String(params.callOnError),
  });
  let current: JsonRpcMessage = message;
  const rejections: string[] = [];
  const reasons: string[] = [];
  let mutated = false;
  let state: HookState = { accept: true, mutated: false, message: current, reason: "" };
  for (const t of targets) {
    const ref = parseToolRef(t.target);
    const output = await call(ref.server, ref.tool ?? "", { ...state, message: current }, signal ? { signal } : {});
    if (output.isError) {
      rejections.push(`hook ${t.target} failed: ${hookOutputText(output)}`);
      continue;
    }
    const out = hookOutputObject(output);
    if (!out) continue;
    state = {
      accept: out.accept !== false,
      mutated: out.mutated === true,
      message: isRecord(out.message) ? (out.message as unknown as JsonRpcMessage) : current,
      reason: typeof out.reason === "string" ? out.reason : "",
    };
    if (state.mutated && t.mutateDisallowed) {
      state.reason = `${state.reason ? `${state.reason}; ` : ""}mutation not allowed by hook configuration, implicit rejection`;
      state.accept = false;
      state.mutated = false;
    }
    if (!state.accept) rejections.push(`${t.target}: ${state.reason || "rejected"}`);
    if (state.mutated && isRecord(out.message)) {
      current = { ...(out.message as unknown as JsonRpcMessage), jsonrpc: "2.0" };
      mutated = true;
      if (state.reason) reasons.push(state.reason);
    }
  }
  return {
    message: current,
    ...(rejections.length > 0 ? { rejection: rejections.join("; ") } : {}),
    ...(mutated ? { mutation: { mutated: true, ...(reasons.length > 0 ? { reasons } : {}) } } : {}),
  };
}

/** Where a server's message hooks run: its hooks block, how hook tools are called, and a log. */
export interface MessageHookHost {
  server: string;
  hooks: HooksConfig | undefined;
  call: HookCaller;
  log?: McpLogFn;
}

let nextId = 1;

function rejected(direction: string, reason: string): CallToolResult {
  return { content: [{ type: "text", text: `The MCP ${direction} was rejected by a hook: ${reason}` }], isError: true };
}

/**
 * One `tools/call` through the server's message hooks: the request may be rejected or
 * rewritten before it is sent, the response after it arrives.
 */
export async function callToolWithHooks(
  host: MessageHookHost,
  tool: string,
  args: Record<string, unknown>,
  send: (tool: string, args: Record<string, unknown>) => Promise<CallToolResult>,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const { hooks, call } = host;
  if (!hooks || Object.keys(hooks).length === 0) return send(tool, args);
  const note = (level: "info" | "warn", message: string, data: Record<string, unknown>): void =>
    host.log?.(level, message, { server: host.server, tool, ...data });
  const id = nextId++;
  const method = "tools/call";
  const before = await runMessageHooks(
    call,
    hooks,
    { jsonrpc: "2.0", id, method, params: { name: tool, arguments: args } },
    { method, name: tool, direction: "request", callOnError: false },
    signal,
  );
  if (before.rejection) {
    note("warn", "MCP message hook rejected a tools/call", { reason: before.rejection });
    return rejected("request", before.rejection);
  }
  const params = before.message.params ?? {};
  const sentTool = typeof params.name === "string" ? params.name : tool;
  const sentArgs = isRecord(params.arguments) ? params.arguments : args;
  const result = await send(sentTool, sentArgs);
  const after = await runMessageHooks(
    call,
    hooks,
    { jsonrpc: "2.0", id, result: result as unknown as Record<string, unknown> },
    { method, name: sentTool, direction: "response", callOnError: result.isError === true },
    signal,
  );
  if (after.rejection) {
    note("warn", "MCP message hook rejected a tools/call result", { reason: after.rejection });
    return rejected("response", after.rejection);
  }
  const final = (isRecord(after.message.result) ? after.message.result : result) as CallToolResult;
  const mutations: Record<string, Mutation> = {
    ...(before.mutation ? { request: before.mutation } : {}),
    ...(after.mutation ? { response: after.mutation } : {}),
  };
  if (Object.keys(mutations).length === 0) return final;
  note("info", "MCP message hooks changed a tools/call", { mutations });
  return { ...final, _meta: { ...(final._meta ?? {}), [HOOK_MUTATIONS_META_KEY]: mutations } };
}
