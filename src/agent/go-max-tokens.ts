/**
 * The output limit a Go-style agent sends when neither it nor `agents.defaults` sets one: the
 * Go nanobot leaves it at zero and each of its wire adapters fills in its own — 64,000 for
 * Anthropic Messages, 4,096 for Chat Completions, none for OpenAI Responses (the model's own
 * limit). The Python nanobot always sends its `maxTokens` (8,192 unless set).
 */
import type { ProviderApi } from "../config/index.js";
import { PRESET_DEFAULTS } from "../config/model-presets.js";

export interface OutputLimit {
  /** Sent with each request, and kept free of the window when budgeting the prompt. */
  maxTokens: number;
  /** True: the request carries no limit; `maxTokens` only reserves room in the budgets. */
  omit?: true;
}

export function goDefaultOutputLimit(api: ProviderApi): OutputLimit {
  switch (api) {
    case "anthropic":
      return { maxTokens: 64_000 };
    case "chat":
      return { maxTokens: 4_096 };
    case "responses":
      return { maxTokens: PRESET_DEFAULTS.maxTokens, omit: true };
  }
}
