/**
 * Providers taken from well-known environment variables, so `OPENAI_API_KEY=… nanobot` works
 * with no config file, and a Go-style `nanobot.yaml` (which names no provider) finds its key.
 */
import type { Env } from "./interpolate.js";
import type { ProviderApi } from "./schema-providers.js";

interface EnvProviderSpec {
  name: string;
  keyVar: string;
  baseVar?: string;
  defaultBase?: string;
  api: ProviderApi;
}

/** Ordered by preference: the first one present becomes the default when nothing else says. */
const ENV_PROVIDERS: readonly EnvProviderSpec[] = [
  { name: "anthropic", keyVar: "ANTHROPIC_API_KEY", baseVar: "ANTHROPIC_BASE_URL", api: "anthropic" },
  { name: "openai", keyVar: "OPENAI_API_KEY", baseVar: "OPENAI_BASE_URL", api: "chat" },
  { name: "openrouter", keyVar: "OPENROUTER_API_KEY", defaultBase: "https://openrouter.ai/api/v1", api: "chat" },
  { name: "deepseek", keyVar: "DEEPSEEK_API_KEY", defaultBase: "https://api.deepseek.com", api: "chat" },
  { name: "groq", keyVar: "GROQ_API_KEY", defaultBase: "https://api.groq.com/openai/v1", api: "chat" },
  {
    name: "gemini",
    keyVar: "GEMINI_API_KEY",
    defaultBase: "https://generativelanguage.googleapis.com/v1beta/openai/",
    api: "chat",
  },
  { name: "mistral", keyVar: "MISTRAL_API_KEY", defaultBase: "https://api.mistral.ai/v1", api: "chat" },
];

export interface EnvProvider {
  apiKey: string;
  apiBase?: string;
  api: ProviderApi;
}

/** Every provider whose API key variable is set and non-empty. */
export function providersFromEnv(env: Env): Record<string, EnvProvider> {
  const out: Record<string, EnvProvider> = {};
  for (const spec of ENV_PROVIDERS) {
    const apiKey = env[spec.keyVar];
    if (!apiKey) continue;
    const apiBase = (spec.baseVar ? env[spec.baseVar] : undefined) || spec.defaultBase;
    out[spec.name] = apiBase ? { apiKey, apiBase, api: spec.api } : { apiKey, api: spec.api };
  }
  return out;
}
