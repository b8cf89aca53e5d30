/**
 * MCP message hooks (Go nanobot): `mcpServers.<x>.hooks` maps JSON-RPC methods (Go's key
 * syntax: `tools/call?direction=request&name=delete_file`, `*`, `!mutate:`) to hook tools that
 * see each `tools/call`, `prompts/get` and `resources/read` to and from that server (the
 * `name` parameter is the tool or prompt name, or the resource URI). A hook tool gets
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

/** A message a hook rejected; its text is what the model reads. */
export class MessageRejectedError extends Error {
  constructor(
    readonly direction: "request" | "response",
    readonly reason: string,
  ) {
    super(`The MCP ${direction} was rejected by a hook: ${reason}`);
    this.name = "MessageRejectedError";
  }
}

/** The methods hooked here: the ones a turn sends (tools, prompts, resources). */
export const HOOKED_METHODS = ["tools/call", "prompts/get", "resources/read"] as const;
export type HookedMethod = (typeof HOOKED_METHODS)[number];

/** The hook parameter `name` of a request, as Go reads it: the tool or prompt name, or the resource URI. */
function messageName(method: HookedMethod, params: Record<string, unknown>): string {
  const value = method === "resources/read" ? params.uri : params.name;
  return typeof value === "string" ? value : "";
}

/**
 * One request/response exchange through the server's message hooks: the request may be
 * rejected or rewritten before it is sent, the response after it arrives. A rejection throws
 * `MessageRejectedError`; changes are logged and kept in the result's `_meta`.
 */
export async function exchangeWithHooks<R extends object>(
  host: MessageHookHost,
  method: HookedMethod,
  params: Record<string, unknown>,
  send: (params: Record<string, unknown>) => Promise<R>,
  signal?: AbortSignal,
): Promise<R> {
  const { hooks, call } = host;
  if (!hooks || Object.keys(hooks).length === 0) return send(params);
  const name = messageName(method, params);
  const note = (level: "info" | "warn", message: string, data: Record<string, unknown>): void =>
    host.log?.(level, message, { server: host.server, method, name, ...data });
  const id = nextId++;
  const before = await runMessageHooks(call, hooks, { jsonrpc: "2.0", id, method, params }, { method, name, direction: "request", callOnError: false }, signal);
  if (before.rejection) {
    note("warn", `MCP message hook rejected a ${method}`, { reason: before.rejection });
    throw new MessageRejectedError("request", before.rejection);
  }
  const sent = isRecord(before.message.params) ? before.message.params : params;
  const result = await send(sent);
  const isError = (result as { isError?: unknown }).isError === true;
  const after = await runMessageHooks(
    call,
    hooks,
    { jsonrpc: "2.0", id, result: result as unknown as Record<string, unknown> },
    { method, name: messageName(method, sent), direction: "response", callOnError: isError },
    signal,
  );
  if (after.rejection) {
    note("warn", `MCP message hook rejected a ${method} result`, { reason: after.rejection });
    throw new MessageRejectedError("response", after.rejection);
  }
  const final = (isRecord(after.message.result) ? after.message.result : result) as R & { _meta?: Record<string, unknown> };
  const mutations: Record<string, Mutation> = {
    ...(before.mutation ? { request: before.mutation } : {}),
    ...(after.mutation ? { response: after.mutation } : {}),
  };
  if (Object.keys(mutations).length === 0) return final;
  note("info", `MCP message hooks changed a ${method}`, { mutations });
  return { ...final, _meta: { ...(final._meta ?? {}), [HOOK_MUTATIONS_META_KEY]: mutations } };
}

/** A `tools/call` through the message hooks; a rejection is the tool's error result. */
export async function callToolWithHooks(
  host: MessageHookHost,
  tool: string,
  args: Record<string, unknown>,
  send: (tool: string, args: Record<string, unknown>) => Promise<CallToolResult>,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  try {
    return await exchangeWithHooks(
      host,
      "tools/call",
      { name: tool, arguments: args },
      (p) => send(typeof p.name === "string" ? p.name : tool, isRecord(p.arguments) ? p.arguments : args),
      signal,
    );
  } catch (err) {
    if (err instanceof MessageRejectedError) return { content: [{ type: "text", text: err.message }], isError: true };
    throw err;
  }
}
