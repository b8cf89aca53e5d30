/**
 * MCP-UI resources a tool returned, rendered in a sandboxed frame: `sandbox="allow-scripts"`
 * without `allow-same-origin`, so the page runs with an opaque origin (no access to this page,
 * its storage or the gateway's API key) and cannot open windows or navigate this one. What it
 * may do is post MCP-UI messages (`{type, payload, messageId}`); those reach `onAction`, and
 * the outcome goes back to the frame as `ui-message-received` / `ui-message-response`.
 */
import type { UiResourceView } from "./api.js";

export interface UiMessage {
  type: "tool" | "prompt" | "link" | "intent" | "notify";
  payload: Record<string, unknown>;
}

/** What the host answers a frame's message with (`response`) or why it failed (`error`). */
export type UiReply = { response: unknown } | { error: string };

export type UiActionHandler = (message: UiMessage) => Promise<UiReply>;

const ACTION_TYPES = new Set(["tool", "prompt", "link", "intent", "notify"]);
/** A page asks for its height; it is kept on screen without taking the whole conversation. */
const MAX_HEIGHT = 800;
const DEFAULT_HEIGHT = 320;

/** Each frame's window → where its messages go; only our own frames are listened to. */
const frames = new Map<Window, { frame: HTMLIFrameElement; onAction: UiActionHandler }>();
let listening = false;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function reply(target: Window, message: Record<string, unknown>): void {
  // The frame's origin is opaque ("null"): "*" is the only target that reaches it.
  target.postMessage(message, "*");
}

function onMessage(event: MessageEvent): void {
  const source = event.source as Window | null;
  const entry = source ? frames.get(source) : undefined;
  if (!source || !entry) return;
  if (!entry.frame.isConnected) {
    frames.delete(source);
    return;
  }
  const data: unknown = event.data;
  if (!isRecord(data) || typeof data.type !== "string") return;
  if (data.type === "ui-size-change" && isRecord(data.payload) && typeof data.payload.height === "number") {
    entry.frame.style.height = `${Math.max(60, Math.min(MAX_HEIGHT, Math.ceil(data.payload.height)))}px`;
    return;
  }
  if (!ACTION_TYPES.has(data.type) || !isRecord(data.payload)) return;
  const messageId = typeof data.messageId === "string" ? data.messageId : undefined;
  if (messageId) reply(source, { type: "ui-message-received", payload: { messageId } });
  void entry
    .onAction({ type: data.type as UiMessage["type"], payload: data.payload })
    .catch((err: unknown): UiReply => ({ error: err instanceof Error ? err.message : String(err) }))
    .then((outcome) => {
      if (messageId) reply(source, { type: "ui-message-response", payload: { messageId, ...outcome } });
    });
}

/** The first http(s) URL of a `text/uri-list` (comments start with `#`). */
function firstUrl(list: string): string | undefined {
  for (const line of list.split(/\r?\n/)) {
    const url = line.trim();
    if (url && !url.startsWith("#") && /^https?:\/\//i.test(url)) return url;
  }
  return undefined;
}

/** Why a resource shows as a placeholder, or undefined when it renders in a frame. */
function unsupportedReason(mime: string, content: string): string | undefined {
  if (mime.startsWith("text/html")) return undefined;
  if (mime.startsWith("text/uri-list")) return firstUrl(content) ? undefined : "its URL list has no http(s) URL to show";
  if (mime.startsWith("application/vnd.mcp-ui.remote-dom")) {
    return `this UI kind is not supported: remote-dom components (${mime}) are not rendered by this web UI (the tool's text result is in the call above)`;
  }
  return `this UI kind is not supported: ${mime || "no mime type"} (this web UI renders text/html and text/uri-list)`;
}

/** A visible note in place of a resource this page does not render. */
function placeholder(resource: UiResourceView, reason: string): HTMLElement {
  const box = document.createElement("div");
  box.className = "ui-resource-unsupported";
  box.dataset.testid = "ui-unsupported";
  box.dataset.uri = resource.uri;
  box.textContent = `MCP-UI ${resource.uri}: ${reason}.`;
  return box;
}

/** The frame for one resource, or a placeholder saying why a kind is not rendered (remote-dom). */
export function uiResourceElement(resource: UiResourceView, onAction: UiActionHandler): HTMLElement {
  const mime = resource.mimeType.toLowerCase();
  const reason = unsupportedReason(mime, resource.content);
  if (reason !== undefined) return placeholder(resource, reason);
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.title = resource.uri;
  frame.className = "ui-resource";
  frame.dataset.testid = "ui-resource";
  frame.dataset.uri = resource.uri;
  frame.style.height = `${DEFAULT_HEIGHT}px`;
  if (mime.startsWith("text/html")) frame.srcdoc = resource.content;
  else frame.src = firstUrl(resource.content) ?? "about:blank";
  if (!listening) {
    window.addEventListener("message", onMessage);
    listening = true;
  }
  // The frame's window exists once it is in the document; register it then.
  queueMicrotask(() => {
    if (frame.contentWindow) frames.set(frame.contentWindow, { frame, onAction });
  });
  return frame;
}

/** A message text that is an MCP-UI action (what a frame's button sent), for a compact label. */
export function actionLabel(text: string): string | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (!isRecord(value) || !isRecord(value.payload) || typeof value.type !== "string" || !ACTION_TYPES.has(value.type)) return undefined;
    const p = value.payload;
    if (value.type === "tool" && typeof p.toolName === "string") return `▸ ${p.toolName} ${JSON.stringify(p.params ?? {})}`;
    if (value.type === "prompt") return `▸ prompt ${typeof p.promptName === "string" ? p.promptName : ""}`.trim();
    return `▸ ${value.type} ${JSON.stringify(p)}`;
  } catch {
    return undefined;
  }
}
