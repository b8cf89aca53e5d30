/**
 * MCP message hooks on the wire, as the Go nanobot's session runs them: a Transport wrapper
 * around the client transport of a server with `mcpServers.<x>.hooks`, so every JSON-RPC
 * message passes the hooks, not only the calls a turn makes.
 *
 * - Requests and notifications nanobot sends: `direction=request`. A rejected request is not
 *   sent; its caller gets the reason as the error (a tool call: the tool's error the model
 *   reads). A rejected notification is dropped (logged).
 * - Responses the server sends back: `direction=response`, with the request's `method` and
 *   `name`, `callOnError=true` for an error response. A rejected response reaches the caller
 *   as an error with the reason.
 * - Requests the server sends (sampling/createMessage, elicitation/create, roots/list, ping):
 *   `direction=request`; a rejection answers the server with a JSON-RPC error holding the
 *   reason. nanobot's reply to them: `direction=response` (Go hooks its replies as outgoing
 *   messages without a method; here they carry the server request's method so a key can
 *   name them); a rejected reply is replaced by a JSON-RPC error.
 * - Notifications the server sends (progress, list_changed, logging): `direction=request`; a
 *   rejection drops the notification.
 * The handshake (`initialize`, `notifications/initialized`) is not hooked: a hook tool may
 * live on the very server being connected. Hook tools are called unhooked (a `_meta` marker
 * the wrapper strips), so a hook never hooks itself.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../core/errors.js";
import { HOOK_MUTATIONS_META_KEY, MessageRejectedError, runMessageHooks } from "./message-hooks.js";
import type { MessageHookHost } from "./message-hooks.js";

/** `_meta` key nanobot puts on a hook tool's own call; stripped before it is sent. */
export const UNHOOKED_META_KEY = "ai.nanobot/unhooked";
/** JSON-RPC error code of a message a hook rejected (implementation-defined server error range). */
export const HOOK_REJECTED_CODE = -32042;

const HANDSHAKE = new Set(["initialize", "notifications/initialized"]);

type Id = string | number;
type AnyMessage = { jsonrpc: "2.0"; id?: Id; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
type Mutations = Record<string, { mutated: boolean; reasons?: string[] }>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The hook parameter `name`, as Go reads it: the tool or prompt name, or the resource URI. */
export function messageName(method: string, params: Record<string, unknown> | undefined): string {
  const value = method.startsWith("resources/") ? params?.uri : method === "tools/call" || method === "prompts/get" ? params?.name : undefined;
  return typeof value === "string" ? value : "";
}

/** The reason a hook rejected a call, from the error it surfaced as (our own or the SDK's McpError). */
export function hookRejectionText(err: unknown): string | undefined {
  if (err instanceof MessageRejectedError) return err.message;
  if (isRecord(err) && err.code === HOOK_REJECTED_CODE && typeof err.message === "string") return err.message.replace(/^MCP error -?\d+: /, "");
  return undefined;
}

export class HookedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Our requests awaiting a response: what their response hooks need. */
  private readonly pending = new Map<Id, { method: string; name: string; params?: Record<string, unknown>; mutations?: Mutations }>();
  /** Ids of hook tools' own calls (their responses are not hooked or queued). */
  private readonly unhooked = new Set<Id>();
  /** The server's requests awaiting nanobot's reply. */
  private readonly serverRequests = new Map<Id, { method: string; name: string; params?: Record<string, unknown> }>();
  /** Incoming messages pass the hooks one at a time, in the order they arrived. */
  private incoming: Promise<void> = Promise.resolve();

  constructor(
    private readonly inner: Transport,
    private readonly host: MessageHookHost & { hooks: NonNullable<MessageHookHost["hooks"]> },
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onmessage = (message, extra) => this.receive(message as AnyMessage, extra);
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private hooks(message: AnyMessage, method: string, name: string, direction: "request" | "response"): ReturnType<typeof runMessageHooks> {
    return runMessageHooks(this.host.call, this.host.hooks, message as never, { method, name, direction, callOnError: message.error !== undefined });
  }

  private note(level: "info" | "warn", text: string, data: Record<string, unknown>): void {
    this.host.log?.(level, text, { server: this.host.server, ...data });
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as AnyMessage;
    if (m.method !== undefined && isRecord(m.params?._meta) && UNHOOKED_META_KEY in m.params._meta) {
      const { [UNHOOKED_META_KEY]: _marker, ...meta } = m.params._meta;
      if (m.id !== undefined) this.unhooked.add(m.id);
      return this.inner.send({ ...m, params: { ...m.params, _meta: meta } } as JSONRPCMessage, options);
    }
    if (m.method !== undefined && HANDSHAKE.has(m.method)) return this.inner.send(message, options);
    if (m.method !== undefined) {
      const name = messageName(m.method, m.params);
      const out = await this.hooks(m, m.method, name, "request");
      if (out.rejection) {
        this.note("warn", `MCP message hook rejected a ${m.method}`, { method: m.method, name, reason: out.rejection });
        // A rejected request fails its caller; a notification is dropped.
        if (m.id !== undefined) throw new MessageRejectedError("request", out.rejection);
        return;
      }
      const sent = { ...out.message, jsonrpc: "2.0" as const, ...(m.id !== undefined ? { id: m.id } : {}) } as AnyMessage;
      if (out.mutation) this.note("info", `MCP message hooks changed a ${m.method}`, { method: m.method, name, mutations: { request: out.mutation } });
      if (m.id !== undefined) {
        this.pending.set(m.id, { method: m.method, name: messageName(m.method, sent.params) || name, ...(sent.params ? { params: sent.params } : {}), ...(out.mutation ? { mutations: { request: out.mutation } } : {}) });
      }
      return this.inner.send(sent as JSONRPCMessage, options);
    }
    // nanobot's reply to a server request.
    const asked = m.id !== undefined ? this.serverRequests.get(m.id) : undefined;
    if (m.id !== undefined) this.serverRequests.delete(m.id);
    if (!asked) return this.inner.send(message, options);
    const out = await this.hooks({ ...m, method: asked.method, ...(asked.params ? { params: asked.params } : {}) }, asked.method, asked.name, "response");
    if (out.rejection) {
      this.note("warn", `MCP message hook rejected the reply to a ${asked.method}`, { method: asked.method, reason: out.rejection });
      return this.inner.send({ jsonrpc: "2.0", id: m.id!, error: { code: HOOK_REJECTED_CODE, message: `The MCP response was rejected by a hook: ${out.rejection}` } }, options);
    }
    const { method: _m, params: _p, ...reply } = out.message as AnyMessage;
    return this.inner.send({ ...reply, jsonrpc: "2.0", id: m.id } as JSONRPCMessage, options);
  }

  private receive(message: AnyMessage, extra?: MessageExtraInfo): void {
    const deliver = (m: AnyMessage): void => this.onmessage?.(m as JSONRPCMessage, extra);
    if (message.method === undefined && message.id !== undefined && this.unhooked.delete(message.id)) {
      // A hook tool's own answer: never queued behind the message its hook is judging.
      deliver(message);
      return;
    }
    this.incoming = this.incoming
      .then(() => this.receiveHooked(message, deliver))
      .catch((err: unknown) => this.onerror?.(new Error(`MCP message hooks failed: ${errorMessage(err)}`)));
  }

  private async receiveHooked(message: AnyMessage, deliver: (m: AnyMessage) => void): Promise<void> {
    if (message.method === undefined) {
      const req = message.id !== undefined ? this.pending.get(message.id) : undefined;
      if (message.id !== undefined) this.pending.delete(message.id);
      if (!req) return deliver(message);
      // As in Go, a response hook sees the request (method, params) with its result or error.
      const out = await this.hooks({ ...message, method: req.method, ...(req.params ? { params: req.params } : {}) }, req.method, req.name, "response");
      if (out.rejection) {
        this.note("warn", `MCP message hook rejected a ${req.method} result`, { method: req.method, name: req.name, reason: out.rejection });
        return deliver({ jsonrpc: "2.0", id: message.id!, error: { code: HOOK_REJECTED_CODE, message: `The MCP response was rejected by a hook: ${out.rejection}` } });
      }
      const { method: _m, params: _p, ...answer } = out.message as AnyMessage;
      const final = { ...answer, jsonrpc: "2.0" as const, id: message.id! } as AnyMessage;
      const mutations: Mutations = { ...(req.mutations ?? {}), ...(out.mutation ? { response: out.mutation } : {}) };
      if (out.mutation) this.note("info", `MCP message hooks changed a ${req.method}`, { method: req.method, name: req.name, mutations });
      if (Object.keys(mutations).length > 0 && isRecord(final.result)) {
        const meta = isRecord(final.result._meta) ? final.result._meta : {};
        final.result = { ...final.result, _meta: { ...meta, [HOOK_MUTATIONS_META_KEY]: mutations } };
      }
      return deliver(final);
    }
    const name = messageName(message.method, message.params);
    const out = await this.hooks(message, message.method, name, "request");
    if (out.rejection) {
      this.note("warn", `MCP message hook rejected the server's ${message.method}`, { method: message.method, name, reason: out.rejection });
      if (message.id !== undefined) {
        await this.inner.send({ jsonrpc: "2.0", id: message.id, error: { code: HOOK_REJECTED_CODE, message: `The MCP request was rejected by a hook: ${out.rejection}` } });
      }
      return;
    }
    const final = { ...out.message, jsonrpc: "2.0" as const, ...(message.id !== undefined ? { id: message.id } : {}) } as AnyMessage;
    if (out.mutation) this.note("info", `MCP message hooks changed the server's ${message.method}`, { method: message.method, name, mutations: { request: out.mutation } });
    if (message.id !== undefined) {
      const method = final.method ?? message.method;
      this.serverRequests.set(message.id, { method, name: messageName(method, final.params), ...(final.params ? { params: final.params } : {}) });
    }
    deliver(final);
  }
}
