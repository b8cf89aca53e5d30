/**
 * LLM providers in both dialects: the Python nanobot's `providers.<name>` (apiKey/apiBase) and
 * the Go nanobot's `llmProviders.<name>` (dialect/baseURL). Which adapter a provider uses is
 * decided by the provider registry; the schema only checks shapes and enums.
 */
import { z } from "zod";
import { nonNegativeNumber, oneOf, positiveInt, str, stringMap } from "./schema-primitives.js";

/** Wire APIs a provider entry can speak. */
export const PROVIDER_APIS = ["chat", "responses", "anthropic"] as const;
export type ProviderApi = (typeof PROVIDER_APIS)[number];

export const providerSchema = z
  .strictObject({
    apiKey: str().optional(),
    apiBase: str().optional(),
    api: oneOf(PROVIDER_APIS).optional(),
    extraHeaders: stringMap().optional(),
    extraBody: z.record(z.string(), z.unknown()).optional().describe("Fields merged over every request body"),
    extraQuery: stringMap().optional().describe("Query parameters added to every request URL (e.g. api-version)"),
  })
  .describe("An LLM provider. With an apiBase and no api it speaks OpenAI Chat Completions.");

/** Dialect names of the Go nanobot plus our short API names. */
export const LLM_DIALECTS = [
  "OpenAIChatCompletions",
  "OpenAIResponses",
  "OpenResponses",
  "AnthropicMessages",
  "chat",
  "responses",
  "anthropic",
] as const;
export type LlmDialect = (typeof LLM_DIALECTS)[number];

export const llmProviderSchema = z
  .strictObject({
    dialect: oneOf(LLM_DIALECTS).optional(),
    baseURL: str().optional(),
    apiKey: str().optional(),
    headers: stringMap().optional(),
  })
  .describe("A Go-nanobot style LLM provider (dialect + baseURL).");

export const modelPresetSchema = z
  .strictObject({
    model: str(),
    provider: str().optional(),
    maxTokens: positiveInt().optional(),
    contextWindowTokens: positiveInt().optional(),
    temperature: nonNegativeNumber().optional(),
    reasoningEffort: str().optional(),
  })
  .describe("A named model setting the user can switch to (/model NAME).");

/** Maps a Go dialect (or our short name) to the wire API used by the provider layer. */
export function dialectToApi(dialect: LlmDialect | undefined): ProviderApi {
  switch (dialect) {
    case "AnthropicMessages":
    case "anthropic":
      return "anthropic";
    case "OpenAIChatCompletions":
    case "chat":
      return "chat";
    case "OpenAIResponses":
    case "OpenResponses":
    case "responses":
    case undefined:
      // The Go nanobot's default dialect is OpenAI Responses.
      return "responses";
  }
}
