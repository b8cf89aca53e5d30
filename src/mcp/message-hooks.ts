/**
 * MCP message hooks (Go nanobot): `mcpServers.<x>.hooks` maps JSON-RPC methods (Go's key
 * syntax: `tools/call?direction=request&name=delete_file`, `*`, `!mutate:`) to hook tools that
 * see the JSON-RPC messages to and from that server (hooked-transport.ts says which and what a
 * rejection does; the `name` parameter is the tool or prompt name, or the resource URI). A hook tool gets
 *   `{ accept: true, mutated: false, message: {jsonrpc, id, method, params | result}, reason: "" }`
 * and answers with the same shape: `accept: false` rejects the message (for a tool call the
 * model gets the reason as the tool's error), `mutated: true` with a `message` replaces it. What was changed
 * is recorded in the result's `_meta["ai.nanobot.hooks/mutations"]` and logged. A hook tool that fails
 * rejects the message, as in the Go nanobot: a policy that cannot be checked does not pass.
 */
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

/**
 * MCP methods a client session sends or receives (2025-06-18); message hooks see every one but
 * the handshake (`initialize`, `notifications/initialized`), see hooked-transport.ts.
 */
export const MCP_METHODS = [
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "completion/complete",
  "logging/setLevel",
  "sampling/createMessage",
  "elicitation/create",
  "roots/list",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/message",
  "notifications/resources/updated",
  "notifications/resources/list_changed",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/roots/list_changed",
] as const;
export const UNHOOKED_METHODS = ["initialize", "notifications/initialized"] as const;
