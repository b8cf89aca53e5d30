/**
 * `agents.defaults` (the Python nanobot's single-agent settings) and named agents (the Go
 * nanobot's `agents.<name>`, also written as `agents/*.md` files). Defaults follow CONTRACT.md.
 */
import { z } from "zod";
import {
  bool,
  cronExpression,
  intBetween,
  nonNegativeInt,
  nonNegativeNumber,
  numberBetween,
  oneOf,
  positiveInt,
  ratio,
  str,
  stringArray,
  stringList,
  stringMap,
} from "./schema-primitives.js";

export const REASONING_EFFORTS = ["minimal", "low", "medium", "high"] as const;
/** The Python nanobot's efforts (a superset): mapped to the wire values in src/config/model-presets.ts. */
export const PYTHON_REASONING_EFFORTS = [...REASONING_EFFORTS, "xhigh", "max", "adaptive", "none"] as const;
export const RETRY_MODES = ["standard", "persistent"] as const;
/** Go `agents/*.md` front-matter `mode`: every value but `subagent` publishes the agent. */
export const AGENT_MODES = ["", "chat", "primary", "all", "subagent"] as const;

export const agentDefaultsSchema = z
  .strictObject({
    model: str().optional().describe("provider/model, split at the first '/'"),
    provider: str().optional().describe('Force a provider by name; "auto" picks one from the model'),
    workspace: str().optional().describe("Default: $NANOBOT_HOME/workspace"),
    maxTokens: positiveInt()
      .optional()
      .describe(
        "Default 8192 (the Python nanobot's); a named (Go-style) agent without its own maxTokens sends the Go nanobot's default unless this is set: none for OpenAI Responses, 4096 for Chat Completions, 64000 for Anthropic",
      ),
    contextWindowTokens: positiveInt().default(200_000),
    temperature: nonNegativeNumber()
      .optional()
      .describe("Default 0.1 (the Python nanobot's); a named (Go-style) agent without its own temperature sends none unless this is set, as the Go nanobot"),
    maxToolIterations: positiveInt().default(200),
    maxToolResultChars: positiveInt().default(16_000),
    providerRetryMode: oneOf(RETRY_MODES).default("standard"),
    timezone: str().optional(),
    unifiedSession: bool().default(false),
    // The Python nanobot's ranges: a config it refuses is refused here too.
    consolidationRatio: numberBetween(0.1, 0.95).default(0.5),
    maxConcurrentSubagents: positiveInt().default(1),
    maxSubagentDepth: positiveInt().default(3).describe("How deep chat-with-<agent> calls may nest (A → B → C → D is depth 3); deeper calls and cycles are refused"),
    fallbackModels: z
      .array(
        z.union([str(), z.strictObject({ model: str(), provider: str(), maxTokens: positiveInt().optional(), contextWindowTokens: positiveInt().optional(), temperature: nonNegativeNumber().optional(), reasoningEffort: str().optional() })], {
          error: "expected a preset name, a provider/model, or {provider, model, …}",
        }),
      )
      .default([])
      .describe("Tried in order when the model fails: preset names, provider/model references, or inline {provider, model, maxTokens?, contextWindowTokens?, temperature?, reasoningEffort?}"),
    reasoningEffort: oneOf(PYTHON_REASONING_EFFORTS).optional().describe("none turns reasoning off; xhigh/max are sent as high; adaptive leaves it to the provider"),
    modelPreset: str().optional().describe("The modelPresets entry sessions follow; wins over model/maxTokens/… (default = those fields)"),
    // Python nanobot keys we accept so its configs load without warnings.
    memoryWindow: positiveInt().optional(),
    maxMessages: nonNegativeInt().optional().describe("History messages a turn replays at most, the newest (0 = the default, 120, as in Python); it makes no summary"),
    sessionTtlMinutes: nonNegativeInt().optional().describe("Minutes idle before a session is compacted (0 = never; default 15)"),
    idleCompactAfterMinutes: nonNegativeInt().optional().describe("The Python nanobot's newer name for sessionTtlMinutes"),
    idleCompactCheckIntervalSeconds: nonNegativeInt().optional().describe("Seconds between looks for idle sessions (default 60)"),
    failOnToolError: bool().optional().describe("Sub-agents (spawn) stop at their first failing tool call and report what they did (default true, as in Python); main turns always let the model recover"),
    contextBlockLimit: positiveInt().optional(),
    toolHintMaxLength: intBetween(20, 500).optional(),
    llmTimeoutS: nonNegativeNumber().optional(),
    disabledSkills: stringArray().optional(),
    dream: z
      .looseObject({
        enabled: bool().optional(),
        intervalH: positiveInt().optional(),
        cron: cronExpression().optional(),
        modelOverride: str().optional().describe("A modelPresets name Dream runs on (also spelled model)"),
        model: str().optional(),
      })
      .optional()
      .describe("The Dream memory job: enabled, every intervalH hours (default 2), or a cron expression"),
  })
  .describe("Settings every agent inherits unless it overrides them");

/** Instructions: literal text, or an MCP prompt that produces it (Go nanobot). */
export const instructionsSchema = z.union(
  [
    str(),
    z.looseObject({
      mcpServer: str(),
      prompt: str(),
      args: stringMap().optional(),
    }),
  ],
  { error: "expected a string or {mcpServer, prompt, args}" },
);

/** Hook name (config, request, response, …) → MCP targets ("server/tool") that handle it. */
export const hooksSchema = z.record(
  z.string(),
  z.union([str(), z.array(z.union([str(), z.looseObject({})]))], {
    error: "expected a tool reference or a list of them",
  }),
);

/** A top-level `prompts.<name>` (Go nanobot): `${input}` references are filled at use, not at load. */
export const inlinePromptSchema = z.strictObject({
  description: str().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  template: str().optional(),
});

export const outputSchema = z.looseObject({
  name: str().optional(),
  description: str().optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  strict: bool().optional(),
  fields: z.record(z.string(), z.unknown()).optional(),
});

export const agentSchema = z
  .strictObject({
    name: str().optional(),
    shortName: str().optional(),
    description: str().optional(),
    icon: str().optional(),
    iconDark: str().optional(),
    starterMessages: stringList().optional(),
    instructions: instructionsSchema.optional(),
    model: str().optional(),
    provider: str().optional(),
    mcpServers: stringList().optional(),
    tools: stringList().optional(),
    agents: stringList().optional(),
    prompts: stringList().optional(),
    resources: stringList().optional(),
    hooks: hooksSchema.optional(),
    temperature: nonNegativeNumber().optional(),
    topP: ratio().optional(),
    maxTokens: positiveInt().optional(),
    contextWindow: positiveInt().optional(),
    maxToolIterations: positiveInt().optional(),
    reasoningEffort: oneOf(REASONING_EFFORTS).optional(),
    reasoning: z
      .strictObject({ effort: oneOf(REASONING_EFFORTS).optional(), summary: oneOf(["auto", "concise", "detailed"]).optional() })
      .optional()
      .describe("Go nanobot: effort and summary for reasoning models"),
    toolChoice: str().optional(),
    toolExtensions: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    output: outputSchema.optional(),
    truncation: oneOf(["auto", "disabled"]).optional().describe("Responses API context truncation"),
    threadName: str().optional(),
    chat: bool().optional(),
    default: bool().optional().describe("Marks the agent that answers when none is named"),
    mode: oneOf(AGENT_MODES).optional().describe("agents/*.md: subagent = not published as an entrypoint"),
    permissions: z
      .record(z.string(), oneOf(["allow", "deny"] as const))
      .optional()
      .describe("Ordered permission → allow | deny; the last match (or *) wins; default allow"),
    mimeTypes: stringArray().optional(),
    toolOutputMaxLines: positiveInt().optional(),
    toolOutputMaxBytes: positiveInt().optional(),
    disableToolTruncation: bool().optional(),
    aliases: stringArray().optional(),
    cost: z.number().optional(),
    speed: z.number().optional(),
    intelligence: z.number().optional(),
  })
  .describe("A named agent");

/** `agents`: `defaults` plus any number of named agents. */
export const agentsSchema = z
  .object({ defaults: agentDefaultsSchema.default(() => agentDefaultsSchema.parse({})) })
  .catchall(agentSchema);

export type AgentDefaults = z.output<typeof agentDefaultsSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
export type AgentInstructions = z.output<typeof instructionsSchema>;
