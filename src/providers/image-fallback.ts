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
  return messages.some((m) => m.role !== "system" && m.role !== "assistant" && m.content.some(isImagePart));
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
    EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (out) => {
      const withImages = hasImages(request.messages);
      const first = model.stream(request, signal);
      const { streamed } = await forwardEvents(first, out);
      try {
        return await first.result();
      } catch (err) {
        const retry = withImages && !streamed && err instanceof ProviderError && !err.retryable && IMAGE_REJECTION_KINDS.has(err.kind);
        if (!retry) throw err;
        options.log?.("warn", "request with images failed; retrying without them", { error: err.message });
        const second = model.stream({ ...request, messages: stripImages(request.messages) }, signal);
        await forwardEvents(second, out, (e) => e.type === "start");
        return await second.result();
      }
    });
  return { provider: model.provider, model: model.model, contextWindow: model.contextWindow, stream };
}
