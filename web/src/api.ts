/**
 * The gateway's `/api` as typed functions. The API key (when the gateway has one) is kept in
 * localStorage and sent as a bearer token; a 401 asks the page for it once and retries.
 */

export interface ThreadInfo {
  id: string;
  name: string | null;
  /** From the thread's first message (the gateway's store sets it). */
  title: string | null;
  status: "active" | "archived";
  current: boolean;
  createdAt: number;
  messageCount: number;
}

export interface ToolCallView {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** An MCP-UI resource a tool returned (`ui://…`, HTML or a URL list). */
export interface UiResourceView {
  uri: string;
  mimeType: string;
  content: string;
}

export type MessageView =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; reasoning?: string; toolCalls?: ToolCallView[] }
  | { role: "tool"; toolCallId: string; name: string; text: string; isError: boolean; ui?: UiResourceView[] };

export type ChatEvent =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "tool_call"; call: ToolCallView }
  | { type: "tool_result"; toolCallId: string; name: string; text: string; isError: boolean; ui?: UiResourceView[] }
  | { type: "warning"; message: string }
  | { type: "done"; content: string; stopReason: string; toolsUsed: string[]; error?: string; replayed?: boolean }
  | { type: "error"; message: string }
  /** The connection dropped (or the gateway answered 503) before the answer: the message is sent again with its Idempotency-Key. */
  | { type: "retrying"; attempt: number; message: string }
  | ElicitationEvent
  | { type: "elicitation_end"; id: string; action: ElicitAction };

export type ElicitAction = "accept" | "decline" | "cancel";
export type ElicitValue = string | number | boolean | string[];

/** One form field as the gateway describes it (src/mcp/elicitation-schema.ts). */
interface FieldBase {
  name: string;
  label: string;
  description?: string;
  required: boolean;
}
export type ElicitField =
  | (FieldBase & { kind: "string"; format?: "email" | "uri" | "date" | "date-time"; minLength?: number; maxLength?: number; default?: string })
  | (FieldBase & { kind: "number" | "integer"; minimum?: number; maximum?: number; default?: number })
  | (FieldBase & { kind: "boolean"; default?: boolean })
  | (FieldBase & { kind: "select"; options: { value: string; label: string }[]; default?: string })
  | (FieldBase & { kind: "multiselect"; options: { value: string; label: string }[]; minItems?: number; maxItems?: number; default?: string[] });

/** An MCP server asks the user something while a tool runs. */
export interface ElicitationEvent {
  type: "elicitation";
  id: string;
  server: string;
  message: string;
  mode: "form" | "url";
  fields?: ElicitField[];
  url?: string;
}

export interface Info {
  agents: string[];
  model: string | null;
  setupHelp: string | null;
  /** Problems to show: a model without a usable provider, MCP servers that failed to start. */
  notices?: string[];
  /** MCP servers waiting for an OAuth login, with the last attempt's error. */
  mcpLogins?: Array<{ server: string; lastError?: string }>;
}

const KEY_STORAGE = "nanobot.apiKey";
export const SESSION = "default";

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Supplied by the page: shows the key dialog and resolves with what the user typed. */
let askForKey: () => Promise<string> = () => Promise.reject(new ApiError(401, "API key required"));
export function setKeyPrompt(prompt: () => Promise<string>): void {
  askForKey = prompt;
}

async function request(path: string, init: RequestInit = {}, retried = false): Promise<Response> {
  const key = localStorage.getItem(KEY_STORAGE);
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  if (init.body) headers.set("content-type", "application/json");
  const res = await fetch(path, { ...init, headers });
  if (res.status === 401 && !retried) {
    localStorage.setItem(KEY_STORAGE, await askForKey());
    return request(path, init, true);
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new ApiError(res.status, body?.error?.message ?? `HTTP ${res.status}`);
  }
  return res;
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await (await request(path, init)).json()) as T;
}

const post = (body: unknown, method = "POST"): RequestInit => ({ method, body: JSON.stringify(body) });

/** Waits between the sends of a message whose connection dropped. */
const CHAT_RETRY_DELAYS_MS = [500, 2000, 5000];

/** A fresh key per message (crypto.randomUUID needs a secure context; plain http on a LAN address is not one). */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What `/api/events` says about this page's session: a turn ended (on any worker), or the gateway missed some. */
export type SessionEvent = { type: "turn_completed"; sessionKey: string; channel?: string; worker?: string } | { type: "resync" };

/** Waits before following `/api/events` again after its stream ended. */
const FOLLOW_RETRY_MS = 3000;

/** Reads an SSE stream's `data:` lines as JSON, one call per event, until it ends. */
async function readSse<T>(res: Response, onData: (data: T, event: string) => void): Promise<void> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? "message";
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data) onData(JSON.parse(data) as T, event);
    }
  }
}

/** Reads a chat stream's events; true when it ended with `done` or `error`, false when it was cut. */
async function readChatStream(res: Response, onEvent: (e: ChatEvent) => void): Promise<boolean> {
  if (!res.body) return false;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let ended = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return ended;
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue;
      const event = JSON.parse(data) as ChatEvent;
      if (event.type === "done" || event.type === "error") ended = true;
      onEvent(event);
    }
  }
}

export const api = {
  info: () => json<Info>("/api/info"),
  threads: () => json<{ threads: ThreadInfo[]; running: boolean }>(`/api/threads?session=${SESSION}`),
  newThread: () => json<{ thread: ThreadInfo }>("/api/threads", post({ session: SESSION })),
  switchThread: (id: string) => json<{ thread: ThreadInfo }>(`/api/threads/${encodeURIComponent(id)}/switch`, post({ session: SESSION })),
  renameThread: (id: string, name: string) => json<{ thread: ThreadInfo }>(`/api/threads/${encodeURIComponent(id)}`, post({ name }, "PATCH")),
  deleteThread: (id: string) => json<{ deleted: boolean }>(`/api/threads/${encodeURIComponent(id)}`, { method: "DELETE" }),
  messages: (threadId: string) => json<{ messages: MessageView[] }>(`/api/messages?session=${SESSION}&thread=${encodeURIComponent(threadId)}`),
  stop: () => json<{ stopped: number }>("/api/stop", post({ session: SESSION })),
  /** Starts an MCP server's OAuth login: the URL to open, or `connected` when none was needed. */
  mcpLogin: (server: string) =>
    json<{ authorizationUrl?: string; connected?: boolean }>(`/api/mcp/logins/${encodeURIComponent(server)}`, post({})),
  /** Answers an MCP server's question; a form that does not fit is refused with the reason (ApiError 400). */
  answerElicitation: (id: string, action: ElicitAction, content?: Record<string, ElicitValue>) =>
    json<{ ok: boolean }>(`/api/elicitation/${encodeURIComponent(id)}`, post({ action, ...(content ? { content } : {}) })),

  /**
   * Follows the turns of this page's session, wherever they run (another tab, another client,
   * another gateway worker on the same database): `turn_completed` for each, `resync` when the
   * gateway may have missed some. Reconnects when the stream ends; runs until the page closes.
   */
  async follow(onEvent: (e: SessionEvent) => void): Promise<void> {
    for (;;) {
      try {
        const res = await request(`/api/events?session=${encodeURIComponent(`web:${SESSION}`)}`);
        await readSse<Record<string, unknown>>(res, (data, event) => {
          if (event === "turn_completed") onEvent(data as SessionEvent);
          else if (event === "resync") onEvent({ type: "resync" });
        });
      } catch {
        // Cut or refused: try again after a pause, and reload what may have been missed.
      }
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_RETRY_MS));
      onEvent({ type: "resync" });
    }
  },

  /**
   * Runs a turn; calls `onEvent` for each event of the stream until `done` or `error`. The message
   * carries an Idempotency-Key: when the connection drops before the answer ends, it is sent again
   * with the same key, and the gateway answers the repeat from the first turn (never running it
   * twice, never storing the message twice).
   */
  async chat(message: string, agent: string, onEvent: (e: ChatEvent) => void): Promise<void> {
    const init = { ...post({ session: SESSION, message, agent }), headers: { "idempotency-key": newIdempotencyKey() } };
    for (let attempt = 1; ; attempt++) {
      let lost: unknown;
      let unavailable: ApiError | undefined;
      try {
        if (await readChatStream(await request("/api/chat", init), onEvent)) return;
      } catch (err) {
        // An answer with an HTTP error status is final, except a 503 (the gateway could not reach
        // its session store for a moment): like a dropped connection, the keyed repeat is safe.
        if (err instanceof ApiError && err.status !== 503) throw err;
        if (err instanceof ApiError) unavailable = err;
        lost = err;
      }
      if (attempt > CHAT_RETRY_DELAYS_MS.length) {
        if (unavailable) throw unavailable;
        throw new ApiError(0, `The connection to the gateway was lost${lost instanceof Error ? ` (${lost.message})` : ""}. The answer may still arrive: reload the page to see it.`);
      }
      const why = unavailable ? "The gateway is briefly unavailable" : "Connection lost";
      onEvent({ type: "retrying", attempt, message: `${why}; sending again (${attempt}/${CHAT_RETRY_DELAYS_MS.length})…` });
      await new Promise((resolve) => setTimeout(resolve, CHAT_RETRY_DELAYS_MS[attempt - 1]));
    }
  },
};
