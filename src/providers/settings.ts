/**
 * The plain inputs the provider registry is built from. The config layer maps its schema onto
 * these: Python-style `providers.<name>` and Go-style `llmProviders.<name>` both end up here.
 */
import type { ReasoningEffort } from "../core/llm.js";
import { ConfigError } from "../core/errors.js";
import type { WireApi } from "./types.js";

/** Python nanobot style: `providers.<name>: { apiKey, apiBase, api?, extraHeaders? }`. */
export interface ProviderSettings {
  apiKey?: string;
  apiBase?: string;
  api?: WireApi;
  extraHeaders?: Record<string, string>;
  extraBody?: Record<string, unknown>;
  extraQuery?: Record<string, string>;
}

/** Go nanobot style: `llmProviders.<name>: { dialect, baseURL, apiKey }`. */
export interface GoProviderSettings {
  dialect?: string;
  baseURL?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** `modelPresets.<name>`: a named model with its defaults. */
export interface ModelPreset {
  model: string;
  provider?: string;
  maxTokens?: number;
  contextWindowTokens?: number;
  temperature?: number;
  reasoningEffort?: ReasoningEffort;
}

/**
 * Go dialect names → our wire APIs. Anything mentioning Anthropic is Messages, anything
 * mentioning Responses is Responses, other OpenAI-ish names are Chat Completions.
 */
export function wireApiFromDialect(dialect: string | undefined, path = "llmProviders"): WireApi | undefined {
  if (dialect === undefined || dialect === "") return undefined;
  const d = dialect.toLowerCase();
  if (d.includes("anthropic") || d.includes("claude")) return "anthropic";
  if (d.includes("responses")) return "responses";
  if (d.includes("chat") || d.includes("completions") || d.includes("openai") || d === "compatible") return "chat";
  throw new ConfigError(`unknown dialect "${dialect}"`, { path: `${path}.dialect`, expected: "OpenAIChatCompletions, OpenAIResponses or AnthropicMessages" });
}

/** Merges both config styles into one settings map (Python-style entries win on conflicts). */
export function mergeProviderSettings(
  providers: Record<string, ProviderSettings> = {},
  llmProviders: Record<string, GoProviderSettings> = {},
): Map<string, ProviderSettings> {
  const merged = new Map<string, ProviderSettings>();
  for (const [name, go] of Object.entries(llmProviders)) {
    const api = wireApiFromDialect(go.dialect, `llmProviders.${name}`);
    merged.set(name, {
      ...(go.apiKey !== undefined ? { apiKey: go.apiKey } : {}),
      ...(go.baseURL !== undefined ? { apiBase: go.baseURL } : {}),
      ...(api ? { api } : {}),
      ...(go.headers ? { extraHeaders: go.headers } : {}),
    });
  }
  for (const [name, py] of Object.entries(providers)) {
    const prev = merged.get(name) ?? {};
    const defined = Object.fromEntries(Object.entries(py).filter(([, v]) => v !== undefined && v !== "")) as ProviderSettings;
    merged.set(name, { ...prev, ...defined });
  }
  return merged;
}
