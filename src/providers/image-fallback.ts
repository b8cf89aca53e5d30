/**
 * Not every model takes images, and the error a text-only model returns is a plain 400. A
 * request with images that fails that way is retried once with each image replaced by a note.
 */
import { EventStream } from "../core/event-stream.js";
import { ProviderError } from "../core/errors.js";
import type { ProviderErrorKind } from "../core/errors.js";
import type { LanguageModel, LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";
import { modelErrorEvent } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import { isImagePart } from "./content.js";
import { forwardEvents } from "./forward.js";
import type { LogFunction } from "./types.js";

export const IMAGE_OMITTED_NOTE = "[image omitted: this model could not accept image input]";

/** Errors that may mean "no images here"; transient, auth and overflow errors do not. */
const IMAGE_REJECTION_KINDS: ReadonlySet<ProviderErrorKind> = new Set(["bad_request", "not_found", "invalid_response", "unknown"]);

export function hasImages(messages: readonly Message[]): boolean {
  // Plain loops: every model call asks this of its whole history.
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "system" || m.role === "assistant") continue;
    const parts = m.content;
    for (let j = 0; j < parts.length; j++) if (isImagePart(parts[j]!)) return true;
  }
  return false;
}

/** A copy of `messages` with every image part replaced by a text note. */
export function stripImages(messages: readonly Message[]): Message[] {
  return messages.map((m): Message => {
    if (m.role === "user") return { ...m, content: m.content.map((p) => (isImagePart(p) ? { type: "text", text: IMAGE_OMITTED_NOTE } : p)) };
    if (m.role === "tool") return { ...m, content: m.content.map((p) => (isImagePart(p) ? { type: "text", text: IMAGE_OMITTED_NOTE } : p)) };
    return m;
  });
}

export function withImageFallback(model: LanguageModel, options: { log?: LogFunction } = {}): LanguageModel {
  const stream = (request: LLMRequest, signal?: AbortSignal): ModelStream =>
    // Without images there is nothing to fall back from: the model's own stream, no layer around it.
    hasImages(request.messages) ? streamWithFallback(request, signal) : model.stream(request, signal);
  const streamWithFallback = (request: LLMRequest, signal?: AbortSignal): ModelStream =>
    EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (out) => {
      const first = model.stream(request, signal);
      const { streamed } = await forwardEvents(first, out);
      try {
        return await first.result();
      } catch (err) {
        const retry = !streamed && err instanceof ProviderError && !err.retryable && IMAGE_REJECTION_KINDS.has(err.kind);
        if (!retry) throw err;
        options.log?.("warn", "request with images failed; retrying without them", { error: err.message });
        const second = model.stream({ ...request, messages: stripImages(request.messages) }, signal);
        await forwardEvents(second, out, (e) => e.type === "start");
        return await second.result();
      }
    });
  return { provider: model.provider, model: model.model, contextWindow: model.contextWindow, stream };
}
