/**
 * Detects a local OpenAI-compatible server (Ollama at 127.0.0.1:11434 by default, or
 * `OLLAMA_BASE_URL`) when no provider is configured, so a fresh install with Ollama running
 * just works. The probe is one short GET of `/models`; anything but a quick JSON answer with a
 * model means "not there".
 */
import type { FetchFunction } from "../providers/types.js";

export const OLLAMA_DEFAULT_BASE = "http://127.0.0.1:11434/v1";
const PROBE_TIMEOUT_MS = 800;

export interface LocalModel {
  provider: "ollama";
  baseURL: string;
  model: string;
}

export async function detectLocalModel(
  env: Record<string, string | undefined>,
  fetchFn: FetchFunction = fetch,
): Promise<LocalModel | undefined> {
  const baseURL = (env.OLLAMA_BASE_URL ?? OLLAMA_DEFAULT_BASE).replace(/\/+$/, "");
  try {
    const response = await fetchFn(`${baseURL}/models`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: Array<{ id?: unknown }> };
    const model = body.data?.find((m) => typeof m.id === "string")?.id;
    return typeof model === "string" ? { provider: "ollama", baseURL, model } : undefined;
  } catch {
    return undefined;
  }
}
