/**
 * DOM building for the conversation: finished messages from the store and the live turn,
 * which grows as events arrive (text re-rendered as markdown, reasoning and tool calls in
 * collapsed `<details>`).
 */
import type { MessageView, ToolCallView, UiResourceView } from "./api.js";
import { escapeHtml, renderMarkdown } from "./markdown.js";
import { actionLabel, uiResourceElement } from "./ui-resource.js";
import type { UiActionHandler } from "./ui-resource.js";

/** Where MCP-UI frames' actions go (the page sets it: a turn, or a link opened). */
let uiActions: UiActionHandler = () => Promise.resolve({ error: "not ready" });
export function setUiActionHandler(handler: UiActionHandler): void {
  uiActions = handler;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function argsPreview(args: Record<string, unknown>): string {
  const first = Object.values(args)[0];
  const text = typeof first === "string" ? first : JSON.stringify(args);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

export function toolElement(call: ToolCallView): HTMLDetailsElement {
  const box = el("details", "tool");
  box.dataset.testid = "tool-call";
  box.dataset.callId = call.id;
  const summary = el("summary");
  summary.innerHTML = `<span class="tool-name">${escapeHtml(call.name)}</span> <span class="tool-args">${escapeHtml(argsPreview(call.arguments))}</span> <span class="tool-state">running…</span>`;
  box.append(summary, el("pre", "tool-input", JSON.stringify(call.arguments, null, 2)));
  return box;
}

export function setToolResult(box: HTMLElement, text: string, isError: boolean): void {
  const state = box.querySelector(".tool-state");
  if (state) state.textContent = isError ? "failed" : "done";
  box.classList.toggle("error", isError);
  const out = el("pre", "tool-output", text.length > 20_000 ? `${text.slice(0, 20_000)}\n… (truncated)` : text);
  out.dataset.testid = "tool-result";
  box.append(out);
}

/** One assistant turn on screen; the live turn and stored ones share this shape. */
export class TurnView {
  readonly root = el("div", "msg assistant");
  private reasoning: HTMLDetailsElement | undefined;
  private reasoningText = "";
  private text = "";
  private body: HTMLDivElement | undefined;
  private warnings: HTMLDivElement | undefined;
  private pending = false;
  private thinking: HTMLDivElement | undefined;

  constructor() {
    this.root.dataset.testid = "assistant-message";
  }

  /** `thinking…` until the first token, tool call or note: a sent message is never met by silence. */
  startThinking(): void {
    if (this.thinking) return;
    this.thinking = el("div", "thinking");
    this.thinking.dataset.testid = "thinking";
    this.thinking.setAttribute("role", "status");
    this.thinking.append(el("span", "dot"), el("span", "dot"), el("span", "dot"), el("span", "thinking-label", "thinking…"));
    this.root.append(this.thinking);
  }

  private stopThinking(): void {
    this.thinking?.remove();
    this.thinking = undefined;
  }

  addReasoning(delta: string): void {
    this.stopThinking();
    if (!this.reasoning) {
      this.reasoning = el("details", "reasoning");
      this.reasoning.append(el("summary", undefined, "Reasoning"), el("div", "reasoning-text"));
      this.root.prepend(this.reasoning);
    }
    this.reasoningText += delta;
    const target = this.reasoning.querySelector(".reasoning-text");
    if (target) target.textContent = this.reasoningText;
  }

  addText(delta: string): void {
    this.stopThinking();
    if (!this.body) {
      this.body = el("div", "markdown");
      this.root.append(this.body);
    }
    this.text += delta;
    // Re-render at most once a frame: fast streams stay cheap.
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (this.body) this.body.innerHTML = renderMarkdown(this.text);
    });
  }

  /** Text after a tool call starts a new paragraph block below the tools. */
  addTool(call: ToolCallView): void {
    this.stopThinking();
    this.root.append(toolElement(call));
    this.body = undefined;
    this.text = "";
  }

  /** A result's MCP-UI pages show below its (collapsed) call, where they can be used. */
  toolResult(id: string, text: string, isError: boolean, ui: readonly UiResourceView[] = []): void {
    const box = this.root.querySelector<HTMLElement>(`[data-call-id="${CSS.escape(id)}"]`);
    if (box) setToolResult(box, text, isError);
    let after: Element | null = box;
    for (const resource of ui) {
      const frame = uiResourceElement(resource, uiActions);
      if (after) after.after(frame);
      else this.root.append(frame);
      after = frame;
      // Text after the page starts below it.
      this.body = undefined;
      this.text = "";
    }
  }

  /** When nothing streamed (slash command, setup help) the final content is shown whole. */
  finish(content: string): void {
    this.stopThinking();
    if (!this.root.querySelector(".markdown") && content) this.addText(content);
  }

  /** The whole answer, replacing what streamed before the connection dropped (a retried message's replay). */
  replaceAnswer(content: string): void {
    this.stopThinking();
    if (!this.body) return this.addText(content);
    this.text = content;
    this.body.innerHTML = renderMarkdown(content);
  }

  /** A muted note above the answer (the message was cut to fit, …); the turn goes on. */
  warn(text: string): void {
    if (!this.warnings) {
      this.warnings = el("div", "turn-warnings");
      const answer = this.root.querySelector(".markdown, details.tool");
      if (answer) answer.before(this.warnings);
      else this.root.append(this.warnings);
    }
    const n = el("div", "inline-warning", text);
    n.dataset.testid = "turn-warning";
    this.warnings.append(n);
  }

  note(text: string, kind: "error" | "stopped"): void {
    this.stopThinking();
    const n = el("div", `inline-${kind}`, text);
    n.dataset.testid = kind === "error" ? "inline-error" : "stopped";
    this.root.append(n);
  }
}

/** The user's message; one a page's button sent (an MCP-UI action) shows as a short label. */
export function userElement(text: string): HTMLElement {
  const label = actionLabel(text);
  const node = el("div", label ? "msg user action" : "msg user", label ?? text);
  if (label) node.title = text;
  node.dataset.testid = "user-message";
  return node;
}

/** Stored messages → elements; tool results attach to the call that asked for them. */
export function renderHistory(container: HTMLElement, messages: readonly MessageView[]): void {
  container.replaceChildren();
  let turn: TurnView | undefined;
  for (const m of messages) {
    if (m.role === "user") {
      turn = undefined;
      container.append(userElement(m.text));
    } else if (m.role === "assistant") {
      if (!turn) {
        turn = new TurnView();
        container.append(turn.root);
      }
      if (m.reasoning) turn.addReasoning(m.reasoning);
      if (m.text) turn.addText(m.text);
      for (const call of m.toolCalls ?? []) turn.addTool(call);
    } else {
      turn?.toolResult(m.toolCallId, m.text, m.isError, m.ui);
    }
  }
}
