/**
 * Assembles one assistant message while forwarding each piece to the caller the moment it
 * arrives (no buffering). Adapters only translate wire events into calls on this builder.
 */
import type { EventStream } from "../core/event-stream.js";
import { messageId, toolCallId } from "../core/ids.js";
import type { ModelEvent, ModelResponse } from "../core/llm.js";
import type { AssistantContentPart, FinishReason, ReasoningPart, ToolCallPart, Usage } from "../core/messages.js";
import { parseToolArguments } from "./tool-arguments.js";
import type { ModelTarget } from "./types.js";

export class ResponseBuilder {
  private readonly parts: AssistantContentPart[] = [];
  private usageValue: Usage = { promptTokens: 0, completionTokens: 0 };
  private finish: FinishReason | undefined;
  /** True once any content event was pushed; errors after that are not retried. */
  streamed = false;

  constructor(
    private readonly stream: EventStream<ModelEvent, ModelResponse>,
    private readonly target: ModelTarget,
  ) {
    stream.push({ type: "start", provider: target.provider, model: target.model });
  }

  get finishReason(): FinishReason | undefined {
    return this.finish;
  }

  text(delta: string): void {
    if (!delta) return;
    const last = this.parts.at(-1);
    if (last?.type === "text") last.text += delta;
    else this.parts.push({ type: "text", text: delta });
    this.streamed = true;
    this.stream.push({ type: "text_delta", delta });
  }

  /** Appends reasoning text; starts a new reasoning part unless the last part is one. */
  reasoning(delta: string): void {
    if (!delta) return;
    this.currentReasoning().text += delta;
    this.streamed = true;
    this.stream.push({ type: "reasoning_delta", delta });
  }

  /** Starts a fresh reasoning part (a new thinking block or reasoning item). */
  beginReasoning(init: Partial<ReasoningPart> = {}): ReasoningPart {
    const part: ReasoningPart = { type: "reasoning", text: "", ...init };
    this.parts.push(part);
    return part;
  }

  /** The reasoning part being written, created when missing. */
  currentReasoning(): ReasoningPart {
    const last = this.parts.at(-1);
    return last?.type === "reasoning" ? last : this.beginReasoning();
  }

  /** Adds a finished tool call, parsing (and if needed repairing) its arguments. */
  toolCall(id: string | undefined, name: string, rawArguments: string): ToolCallPart {
    const parsed = parseToolArguments(rawArguments);
    const part: ToolCallPart = {
      type: "toolCall",
      id: id || toolCallId(),
      name,
      arguments: parsed.arguments,
      rawArguments,
      ...(parsed.parseError ? { parseError: parsed.parseError } : {}),
    };
    this.parts.push(part);
    this.streamed = true;
    this.stream.push({ type: "tool_call", toolCall: part });
    return part;
  }

  setUsage(usage: Usage): void {
    this.usageValue = usage;
  }

  setFinish(reason: FinishReason): void {
    this.finish = reason;
  }

  hasToolCalls(): boolean {
    return this.parts.some((p) => p.type === "toolCall");
  }

  build(): ModelResponse {
    this.stream.push({ type: "usage", usage: this.usageValue });
    let finishReason = this.finish ?? "stop";
    // Some compatible servers say "stop" after tool calls; the engine keys on tool_calls.
    if (finishReason === "stop" && this.hasToolCalls()) finishReason = "tool_calls";
    return {
      message: {
        id: messageId(),
        role: "assistant",
        content: this.parts,
        provider: this.target.provider,
        model: this.target.model,
        usage: this.usageValue,
        finishReason,
        createdAt: Date.now(),
      },
      finishReason,
      usage: this.usageValue,
      provider: this.target.provider,
      model: this.target.model,
    };
  }
}
