/**
 * Prints one turn as it happens: text deltas straight through, reasoning dimmed, a live spinner
 * line per tool call (`⠋ exec: npm test`) that settles to ✓ or ✗, and at the end the answer
 * re-rendered as markdown on a terminal.
 */
import type { AgentEvent } from "../../core/events.js";
import type { ToolCallPart } from "../../core/messages.js";
import type { Colors } from "../io.js";
import { retryLine } from "../retry-line.js";
import { looksLikeMarkdown, renderTerminalMarkdown, rowsOf } from "./terminal-markdown.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface TerminalOut {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

/** `exec: npm test` — the tool and its most telling argument, on one short line. */
export function toolLine(call: Pick<ToolCallPart, "name" | "arguments">, max = 70): string {
  const args = call.arguments;
  const main = args.command ?? args.path ?? args.url ?? args.query ?? args.pattern ?? Object.values(args)[0];
  const detail = main === undefined ? "" : typeof main === "string" ? main : JSON.stringify(main);
  const line = detail ? `${call.name}: ${detail.replace(/\s+/g, " ")}` : call.name;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export class TurnOutput {
  /** Text printed since the last non-text output: the part markdown re-rendering replaces. */
  private segment = "";
  private atLineStart = true;
  private inReasoning = false;
  private spinner: { call: ToolCallPart; frame: number; timer: NodeJS.Timeout } | undefined;
  /** The `thinking…` line shown from the send until the model's first output. */
  private waiting: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: TerminalOut,
    private readonly colors: Colors,
    private readonly showReasoning: () => boolean,
  ) {}

  private write(text: string): void {
    if (text === "") return;
    this.out.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  private newline(): void {
    if (!this.atLineStart) this.write("\n");
  }

  /**
   * Shows a spinner with `thinking…` until the first output of the turn (terminals only: a pipe
   * gets no control codes). Each model call after a tool result shows it again.
   */
  startWaiting(): void {
    if (this.out.isTTY !== true || this.waiting) return;
    this.newline();
    let frame = 0;
    const draw = (): void => {
      this.out.write(`\r\x1b[K${this.colors.cyan(FRAMES[frame++ % FRAMES.length] ?? "·")} ${this.colors.dim("thinking…")}`);
    };
    draw();
    this.waiting = setInterval(draw, 80);
    this.waiting.unref();
  }

  private stopWaiting(): void {
    if (!this.waiting) return;
    clearInterval(this.waiting);
    this.waiting = undefined;
    this.out.write("\r\x1b[K");
    this.atLineStart = true;
  }

  onEvent(event: AgentEvent): void {
    // Hidden reasoning is still waiting, as far as the user can see.
    const shows = event.type === "text_delta" || event.type === "tool_call" || event.type === "retry_wait" || (event.type === "reasoning_delta" && this.showReasoning());
    if (shows) this.stopWaiting();
    switch (event.type) {
      case "text_delta":
        this.clearSpinner();
        if (this.inReasoning) {
          this.inReasoning = false;
          this.newline();
          this.segment = "";
        }
        this.write(event.delta);
        this.segment += event.delta;
        break;
      case "reasoning_delta":
        if (!this.showReasoning()) break;
        this.clearSpinner();
        this.inReasoning = true;
        this.write(this.colors.dim(event.delta));
        break;
      case "tool_call":
        this.newline();
        this.segment = "";
        this.startSpinner(event.toolCall);
        break;
      case "tool_result":
        this.settleSpinner(event.result.toolCallId, !event.result.isError);
        break;
      case "llm_request":
        // The next model call after tools: waiting again until it answers.
        if (!this.spinner && this.atLineStart) this.startWaiting();
        break;
      case "retry_wait":
        this.clearSpinner();
        this.newline();
        this.write(this.colors.dim(`${retryLine(event)}\n`));
        break;
      default:
        break;
    }
  }

  private startSpinner(call: ToolCallPart): void {
    this.settleSpinner(undefined, true);
    const tty = this.out.isTTY === true;
    if (!tty) {
      this.write(this.colors.dim(`· ${toolLine(call)}\n`));
      return;
    }
    const draw = (): void => {
      if (!this.spinner) return;
      this.out.write(`\r\x1b[K${this.colors.cyan(FRAMES[this.spinner.frame % FRAMES.length] ?? "·")} ${toolLine(call)}`);
      this.spinner.frame++;
    };
    const timer = setInterval(draw, 80);
    timer.unref();
    this.spinner = { call, frame: 0, timer };
    draw();
    this.atLineStart = false;
  }

  /** Replaces the spinner line by its outcome. */
  private settleSpinner(toolCallId: string | undefined, ok: boolean): void {
    const s = this.spinner;
    if (!s || (toolCallId !== undefined && s.call.id !== toolCallId)) return;
    clearInterval(s.timer);
    this.spinner = undefined;
    const mark = ok ? this.colors.green("✓") : this.colors.red("✗");
    this.out.write(`\r\x1b[K${mark} ${this.colors.dim(toolLine(s.call))}\n`);
    this.atLineStart = true;
  }

  /**
   * Frees the terminal for a question (an MCP server asking the user mid-call): the spinner
   * stops on its own line; the tool's outcome still prints when it arrives.
   */
  suspend(): void {
    this.stopWaiting();
    const s = this.spinner;
    if (!s) return this.newline();
    clearInterval(s.timer);
    this.out.write("\n");
    this.atLineStart = true;
  }

  private clearSpinner(): void {
    if (!this.spinner) return;
    this.settleSpinner(this.spinner.call.id, true);
  }

  /**
   * Ends the turn. On a terminal the streamed answer is erased and printed again as rendered
   * markdown — only when all of it is still on screen.
   */
  finish(content: string): void {
    this.stopWaiting();
    this.clearSpinner();
    const columns = this.out.columns ?? 80;
    const rows = this.out.rows ?? 24;
    const streamed = this.segment;
    if (streamed === "" && content !== "") {
      this.newline();
      this.printAnswer(content, columns);
      return;
    }
    const fits = rowsOf(streamed, columns) < rows - 1;
    if (this.out.isTTY === true && streamed.trim() === content.trim() && looksLikeMarkdown(content) && fits) {
      const up = rowsOf(streamed, columns) - 1;
      this.out.write(`\r${up > 0 ? `\x1b[${up}A` : ""}\x1b[J`);
      this.atLineStart = true;
      this.printAnswer(content, columns);
      return;
    }
    this.newline();
  }

  private printAnswer(content: string, columns: number): void {
    const text = this.out.isTTY === true && looksLikeMarkdown(content) ? renderTerminalMarkdown(content, Math.min(columns, 100)) : content;
    this.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  dispose(): void {
    this.stopWaiting();
    if (this.spinner) clearInterval(this.spinner.timer);
    this.spinner = undefined;
  }
}
