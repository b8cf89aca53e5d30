/** Kept apart from the Runtime so light commands (onboard) can read it without loading everything. */
/** Models used when a provider is configured but no model is named anywhere. */
export const FALLBACK_MODELS: Readonly<Record<string, string>> = {
  openai: "gpt-4.1-mini",
  anthropic: "claude-sonnet-4-5",
  openrouter: "anthropic/claude-sonnet-4.5",
  deepseek: "deepseek-chat",
  groq: "llama-3.3-70b-versatile",
  gemini: "gemini-2.5-flash",
  mistral: "mistral-large-latest",
  ollama: "llama3.2",
};
