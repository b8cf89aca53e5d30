/**
 * The `chat <model>` span around one model call, with the GenAI semantic-convention
 * attributes (request and response model, token usage, finish reason). The provider layer adds
 * `server.address` / `server.port` to it when it opens the connection.
 */
import type { LanguageModel, LLMRequest, ModelResponse } from "../../core/llm.js";
import { SpanKind, tracingEnabled, withSpan } from "../../core/tracing/tracer.js";

/**
 * `purpose` names a call made outside an agent's rounds (`consolidation`, `heartbeat`), as the
 * span's `nanobot.purpose`, so a trace shows what the extra model calls were for.
 */
export function tracedModelCall(model: LanguageModel, request: LLMRequest, call: () => Promise<ModelResponse>, purpose?: string): Promise<ModelResponse> {
  // Off: the call itself, without the span's name, attributes and wrapping promise.
  if (!tracingEnabled()) return call();
  return withSpan(
    `chat ${model.model}`,
    {
      kind: SpanKind.client,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": model.provider,
        "gen_ai.request.model": model.model,
        "gen_ai.request.max_tokens": request.maxTokens,
        "gen_ai.request.temperature": request.temperature,
        "gen_ai.request.top_p": request.topP,
        "nanobot.purpose": purpose,
      },
    },
    async (span) => {
      const response = await call();
      span?.setAttributes({
        "gen_ai.response.model": response.model,
        "gen_ai.usage.input_tokens": response.usage.promptTokens,
        "gen_ai.usage.output_tokens": response.usage.completionTokens,
        "gen_ai.response.finish_reasons": [response.finishReason],
      });
      return response;
    },
  );
}
