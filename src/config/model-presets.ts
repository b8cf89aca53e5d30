/**
 * Model presets as the Python nanobot has them: `modelPresets.<name>` is a complete model
 * setting (model, provider, max tokens, context window, temperature, reasoning effort), the
 * reserved name `default` is the one built from the direct `agents.defaults.*` fields, and
 * `agents.defaults.modelPreset` picks the one sessions follow — even when `model` is also set,
 * as in Python, where the preset "takes precedence over the fields below". A session's
 * `/model <name>` choice (session metadata `modelPreset`) goes before both.
 *
 * A preset's omitted fields take the Python preset defaults (8192 / 200000 / 0.1 / no effort),
 * not the `agents.defaults` values: a preset is a whole setting, not a patch.
 */
import type { NanobotConfig } from "./schema.js";
import { ConfigError } from "../core/errors.js";
import type { ReasoningEffort } from "../core/llm.js";

export const DEFAULT_PRESET = "default";

/** Python `ModelPresetConfig` defaults for the fields a preset leaves out. */
export const PRESET_DEFAULTS = { maxTokens: 8192, contextWindowTokens: 200_000, temperature: 0.1 } as const;

/** What a preset (or the defaults) resolves to: a registry reference plus generation settings. */
export interface ModelSelection {
  /** The preset's name (`default` for the direct fields). */
  preset: string;
  /** A registry reference: `provider/model`, or a bare model the registry routes. */
  modelRef: string;
  maxTokens: number;
  contextWindow: number;
  temperature: number;
  reasoningEffort?: ReasoningEffort;
}

/** An inline `fallbackModels` entry (Python `InlineFallbackConfig`). */
export interface InlineFallback {
  model: string;
  provider: string;
  maxTokens?: number;
  contextWindowTokens?: number;
  temperature?: number;
  reasoningEffort?: string;
}

type PresetLike = { model: string; provider?: string; reasoningEffort?: string };

/**
 * `provider` + `model` → one registry reference. A forced provider prefixes the model unless the
 * model already names it ("openrouter" + "anthropic/claude-…" → "openrouter/anthropic/claude-…");
 * `auto` (or none) leaves the routing to the model's own prefix or name.
 */
export function refFor(model: string, provider: string | undefined): string {
  if (!provider || provider === "auto" || model.startsWith(`${provider}/`)) return model;
  return `${provider}/${model}`;
}

/**
 * Python's reasoning efforts mapped onto the wire values: `none` turns reasoning off, `xhigh` /
 * `max` are the strongest we send (`high`), `adaptive` leaves the choice to the provider.
 */
export function wireEffort(effort: string | undefined): ReasoningEffort | undefined {
  switch (effort) {
    case "minimal":
    case "low":
    case "medium":
    case "high":
      return effort;
    case "xhigh":
    case "max":
      return "high";
    default:
      return undefined;
  }
}

function presetEffort(preset: PresetLike): ReasoningEffort | undefined {
  return wireEffort(preset.reasoningEffort);
}

/** The preset names a user may pick (`default` first), as `/model` lists them. */
export function presetNames(config: NanobotConfig): string[] {
  return [DEFAULT_PRESET, ...Object.keys(config.modelPresets).filter((n) => n !== DEFAULT_PRESET).sort()];
}

/** A preset name as configured: exact, else the single case-insensitive match (Python's rule). */
export function findPreset(config: NanobotConfig, name: string): string | undefined {
  const wanted = name.trim();
  const names = presetNames(config);
  if (names.includes(wanted)) return wanted;
  const matches = names.filter((n) => n.toLowerCase() === wanted.toLowerCase());
  return matches.length === 1 ? matches[0] : undefined;
}

/** The implicit `default` preset: the direct `agents.defaults` fields, or undefined with no model. */
export function defaultSelection(config: NanobotConfig, fallbackRef?: string): ModelSelection | undefined {
  const d = config.agents.defaults;
  const modelRef = d.model ? refFor(d.model, d.provider) : fallbackRef;
  if (!modelRef) return undefined;
  const effort = wireEffort(d.reasoningEffort);
  return {
    preset: DEFAULT_PRESET,
    modelRef,
    maxTokens: d.maxTokens ?? PRESET_DEFAULTS.maxTokens,
    contextWindow: d.contextWindowTokens,
    temperature: d.temperature ?? PRESET_DEFAULTS.temperature,
    ...(effort ? { reasoningEffort: effort } : {}),
  };
}

/** A named preset's selection; throws ConfigError naming the presets there are. */
export function presetSelection(config: NanobotConfig, name: string, fallbackRef?: string): ModelSelection {
  const found = findPreset(config, name);
  if (found === DEFAULT_PRESET) {
    const selection = defaultSelection(config, fallbackRef);
    if (selection) return selection;
  }
  const preset = found ? config.modelPresets[found] : undefined;
  if (!found || !preset) {
    throw new ConfigError(`model preset "${name}" not found; available: ${presetNames(config).join(", ")}`, {
      path: "modelPresets",
      expected: `one of ${presetNames(config).join(", ")}`,
    });
  }
  const effort = presetEffort(preset);
  return {
    preset: found,
    modelRef: refFor(preset.model, preset.provider),
    maxTokens: preset.maxTokens ?? PRESET_DEFAULTS.maxTokens,
    contextWindow: preset.contextWindowTokens ?? PRESET_DEFAULTS.contextWindowTokens,
    temperature: preset.temperature ?? PRESET_DEFAULTS.temperature,
    ...(effort ? { reasoningEffort: effort } : {}),
  };
}

/**
 * The selection a session follows: its own `/model` choice, else `agents.defaults.modelPreset`,
 * else the direct fields. Undefined when none of them names a model (the caller then falls back
 * to a detected local model or one per configured provider).
 */
export function activeSelection(config: NanobotConfig, sessionPreset?: string, fallbackRef?: string): ModelSelection | undefined {
  const name = sessionPreset ?? config.agents.defaults.modelPreset;
  if (name) return presetSelection(config, name, fallbackRef);
  return defaultSelection(config, fallbackRef);
}

/**
 * One `fallbackModels` entry as a selection. A preset name uses the whole preset; an inline
 * object inherits max tokens, window and temperature from the primary but never its reasoning
 * effort (Python's rule); any other string is a model reference (nanobot's own extension).
 */
export function fallbackSelection(config: NanobotConfig, entry: string | InlineFallback, primary: ModelSelection): ModelSelection {
  if (typeof entry === "string") {
    if (findPreset(config, entry)) return presetSelection(config, entry);
    return { ...primary, preset: entry, modelRef: entry, reasoningEffort: undefined };
  }
  const effort = wireEffort(entry.reasoningEffort);
  return {
    preset: `${entry.provider}/${entry.model}`,
    modelRef: refFor(entry.model, entry.provider),
    maxTokens: entry.maxTokens ?? primary.maxTokens,
    contextWindow: entry.contextWindowTokens ?? primary.contextWindow,
    temperature: entry.temperature ?? primary.temperature,
    ...(effort ? { reasoningEffort: effort } : {}),
  };
}

/**
 * Load-time checks Python's schema makes: `default` is reserved, and `modelPreset`,
 * `dream.modelOverride` and preset-like `fallbackModels` entries must name a configured preset.
 */
export function checkModelPresets(config: NanobotConfig, file: string): void {
  const fail = (message: string, path: string): never => {
    throw new ConfigError(`${file}: ${message}`, { file, path, expected: `one of ${presetNames(config).join(", ")}` });
  };
  if (Object.hasOwn(config.modelPresets, DEFAULT_PRESET)) {
    fail('modelPresets.default: the name "default" is reserved for the agents.defaults fields; rename the preset', "modelPresets.default");
  }
  const d = config.agents.defaults;
  if (d.modelPreset !== undefined && !findPreset(config, d.modelPreset)) {
    fail(`agents.defaults.modelPreset: preset "${d.modelPreset}" not found in modelPresets (available: ${presetNames(config).join(", ")})`, "agents.defaults.modelPreset");
  }
  d.fallbackModels.forEach((entry, i) => {
    // A bare word is a preset name in Python; nanobot also takes provider/model references.
    if (typeof entry === "string" && !entry.includes("/") && !findPreset(config, entry)) {
      fail(`agents.defaults.fallbackModels[${i}]: "${entry}" is not a preset in modelPresets (available: ${presetNames(config).join(", ")}); write a preset name, provider/model, or {provider, model}`, `agents.defaults.fallbackModels.${i}`);
    }
  });
  const dreamOverride = (d.dream as { modelOverride?: unknown; model?: unknown } | undefined)?.modelOverride ?? (d.dream as { model?: unknown } | undefined)?.model;
  if (typeof dreamOverride === "string" && !findPreset(config, dreamOverride)) {
    fail(`agents.defaults.dream.modelOverride: preset "${dreamOverride}" not found in modelPresets (available: ${presetNames(config).join(", ")})`, "agents.defaults.dream.modelOverride");
  }
}
