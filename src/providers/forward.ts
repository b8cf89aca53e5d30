/** Shared plumbing for the LanguageModel decorators (retry, fallback, image fallback). */
import type { EventStream } from "../core/event-stream.js";
import type { ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";

const CONTENT_EVENTS: ReadonlySet<ModelEvent["type"]> = new Set(["text_delta", "reasoning_delta", "tool_call"]);

/** True for events that put model output in front of the caller. */
export const isContentEvent = (event: ModelEvent): boolean => CONTENT_EVENTS.has(event.type);

/**
 * Forwards an inner stream's events to `out` as they are pushed, except its terminal `error`
 * (the decorator decides what the caller sees) and events `skip` rejects. Resolves once the inner
 * stream has ended, with whether content was forwarded; the caller then awaits its result.
 */
export function forwardEvents(
  inner: ModelStream,
  out: EventStream<ModelEvent, ModelResponse>,
  skip?: (event: ModelEvent) => boolean,
  onContent?: () => void,
): Promise<{ streamed: boolean }> {
  const outcome = { streamed: false };
  return inner
    .pipe((event) => {
      if (event.type === "error" || (skip !== undefined && skip(event))) return;
      if (isContentEvent(event)) {
        outcome.streamed = true;
        onContent?.();
      }
      out.push(event);
    })
    .then(() => outcome);
}
