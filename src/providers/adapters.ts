/** Adapters registered by wire API; a provider names its API, never its implementation. */
import { streamAnthropic } from "./anthropic.js";
import { streamChat } from "./chat.js";
import { streamResponses } from "./responses.js";
import type { StreamFunction, WireApi } from "./types.js";

const ADAPTERS: Record<WireApi, StreamFunction> = {
  chat: streamChat,
  responses: streamResponses,
  anthropic: streamAnthropic,
};

export function adapterFor(api: WireApi): StreamFunction {
  return ADAPTERS[api];
}

export const WIRE_APIS: readonly WireApi[] = ["chat", "responses", "anthropic"];
