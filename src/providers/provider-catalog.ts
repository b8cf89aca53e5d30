/**
 * The named providers we know: wire API, default endpoint, where the key lives, and which
 * bare model names belong to them. Users can add any other name with an `apiBase`.
 */
import type { WireApi } from "./types.js";

export interface ProviderSpec {
  name: string;
  api: WireApi;
  /** Default base URL; `undefined` means the user must give one (`custom`). */
  baseURL?: string;
  /** Environment variable holding the API key. */
  apiKeyEnv?: string;
  /** Environment variable overriding the base URL. */
  baseURLEnv?: string;
  /** Bare model names matching one of these are routed here. */
  modelPatterns: readonly RegExp[];
  /** Runs on this machine; no API key required. */
  local?: boolean;
}

export type KnownProvider =
  | "openai"
  | "anthropic"
  | "openrouter"
  | "deepseek"
  | "groq"
  | "gemini"
  | "mistral"
  | "moonshot"
  | "dashscope"
  | "zhipu"
  | "siliconflow"
  | "xai"
  | "together"
  | "fireworks"
  | "minimax"
  | "volcengine"
  | "ollama"
  | "vllm"
  | "lm_studio"
  | "custom";

/** Order matters for bare-name routing: the first matching pattern wins. */
export const PROVIDER_CATALOG: readonly ProviderSpec[] = [
  { name: "anthropic", api: "anthropic", baseURL: "https://api.anthropic.com", apiKeyEnv: "ANTHROPIC_API_KEY", baseURLEnv: "ANTHROPIC_BASE_URL", modelPatterns: [/^claude/i] },
  {
    name: "openai",
    api: "chat",
    baseURL: "https://api.openai.com/v1",
    apiKeyEnv: "OPENAI_API_KEY",
    baseURLEnv: "OPENAI_BASE_URL",
    modelPatterns: [/^gpt/i, /^o\d/i, /^chatgpt/i, /^codex/i, /^text-embedding/i],
  },
  { name: "openrouter", api: "chat", baseURL: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY", modelPatterns: [/^openrouter/i] },
  { name: "deepseek", api: "chat", baseURL: "https://api.deepseek.com/v1", apiKeyEnv: "DEEPSEEK_API_KEY", modelPatterns: [/^deepseek/i] },
  { name: "groq", api: "chat", baseURL: "https://api.groq.com/openai/v1", apiKeyEnv: "GROQ_API_KEY", modelPatterns: [/^groq/i] },
  {
    name: "gemini",
    api: "chat",
    baseURL: "https://generativelanguage.googleapis.com/v1beta/openai",
    apiKeyEnv: "GEMINI_API_KEY",
    modelPatterns: [/^gemini/i, /^gemma/i],
  },
  {
    name: "mistral",
    api: "chat",
    baseURL: "https://api.mistral.ai/v1",
    apiKeyEnv: "MISTRAL_API_KEY",
    modelPatterns: [/^mistral/i, /^codestral/i, /^magistral/i, /^devstral/i, /^ministral/i, /^pixtral/i],
  },
  { name: "moonshot", api: "chat", baseURL: "https://api.moonshot.ai/v1", apiKeyEnv: "MOONSHOT_API_KEY", modelPatterns: [/^moonshot/i, /^kimi/i] },
  {
    name: "dashscope",
    api: "chat",
    baseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1",
    apiKeyEnv: "DASHSCOPE_API_KEY",
    modelPatterns: [/^qwen/i, /^qwq/i, /^dashscope/i],
  },
  { name: "zhipu", api: "chat", baseURL: "https://open.bigmodel.cn/api/paas/v4", apiKeyEnv: "ZHIPUAI_API_KEY", modelPatterns: [/^glm/i, /^zhipu/i] },
  { name: "siliconflow", api: "chat", baseURL: "https://api.siliconflow.cn/v1", apiKeyEnv: "SILICONFLOW_API_KEY", modelPatterns: [] },
  { name: "xai", api: "chat", baseURL: "https://api.x.ai/v1", apiKeyEnv: "XAI_API_KEY", modelPatterns: [/^grok/i] },
  { name: "together", api: "chat", baseURL: "https://api.together.xyz/v1", apiKeyEnv: "TOGETHER_API_KEY", modelPatterns: [] },
  { name: "fireworks", api: "chat", baseURL: "https://api.fireworks.ai/inference/v1", apiKeyEnv: "FIREWORKS_API_KEY", modelPatterns: [] },
  { name: "minimax", api: "chat", baseURL: "https://api.minimax.io/v1", apiKeyEnv: "MINIMAX_API_KEY", modelPatterns: [/^minimax/i, /^abab/i] },
  { name: "volcengine", api: "chat", baseURL: "https://ark.cn-beijing.volces.com/api/v3", apiKeyEnv: "ARK_API_KEY", modelPatterns: [/^doubao/i] },
  { name: "ollama", api: "chat", baseURL: "http://127.0.0.1:11434/v1", apiKeyEnv: "OLLAMA_API_KEY", baseURLEnv: "OLLAMA_BASE_URL", modelPatterns: [], local: true },
  { name: "vllm", api: "chat", baseURL: "http://127.0.0.1:8000/v1", apiKeyEnv: "VLLM_API_KEY", modelPatterns: [], local: true },
  { name: "lm_studio", api: "chat", baseURL: "http://127.0.0.1:1234/v1", apiKeyEnv: "LM_STUDIO_API_KEY", modelPatterns: [], local: true },
  // Any OpenAI-compatible endpoint; the user supplies apiBase (key optional).
  { name: "custom", api: "chat", modelPatterns: [], local: true },
];

export function findProviderSpec(name: string): ProviderSpec | undefined {
  return PROVIDER_CATALOG.find((p) => p.name === name);
}

/** The catalogue provider a bare model name belongs to, by its patterns. */
export function providerForModelName(model: string): ProviderSpec | undefined {
  return PROVIDER_CATALOG.find((p) => p.modelPatterns.some((re) => re.test(model)));
}
