/**
 * The whole configuration as one zod schema. Input accepts both nanobot dialects; the parsed
 * output has every default filled in. `loadConfig` then merges `tools.mcpServers` and the
 * `agents/*.md` directory and splits named agents from `agents.defaults` (see `NanobotConfig`).
 */
import { z } from "zod";
import { agentsSchema, hooksSchema, inlinePromptSchema } from "./schema-agents.js";
import type { AgentConfig, AgentDefaults } from "./schema-agents.js";
import { apiSchema, channelsSchema, envSchema, gatewaySchema, publishSchema, storeSchema } from "./schema-misc.js";
import { llmProviderSchema, modelPresetSchema, providerSchema } from "./schema-providers.js";
import { mcpHostSchema, mcpServersSchema, toolsSchema } from "./schema-tools.js";
import type { McpServerConfig, ToolsConfig } from "./schema-tools.js";

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    providers: z.record(z.string(), providerSchema).default({}),
    llmProviders: z.record(z.string(), llmProviderSchema).default({}),
    agents: agentsSchema.default(() => agentsSchema.parse({})),
    mcpServers: mcpServersSchema.default({}),
    mcp: mcpHostSchema.default(() => mcpHostSchema.parse({})),
    tools: toolsSchema.default(() => toolsSchema.parse({})),
    channels: channelsSchema.default({}),
    gateway: gatewaySchema.default(() => gatewaySchema.parse({})),
    api: apiSchema.optional(),
    store: storeSchema.optional(),
    modelPresets: z.record(z.string(), modelPresetSchema).default({}),
    hooks: hooksSchema.default({}),
    publish: publishSchema.default({}),
    env: envSchema.default({}),
    prompts: z.record(z.string(), inlinePromptSchema).default({}).describe("Go nanobot prompt templates (`${arg}` filled from the prompt's input)"),
    audio: z.looseObject({}).optional().describe("Python nanobot text-to-speech settings"),
  })
  .describe("nanobot configuration (JSON or YAML; camelCase or snake_case keys; ${VAR} interpolation)");

/** What zod produces; `NanobotConfig` is the shape callers get after `loadConfig`. */
export type ParsedConfig = z.output<typeof configSchema>;

/** The resolved configuration: defaults filled, MCP servers merged, named agents split out. */
export interface NanobotConfig extends Omit<ParsedConfig, "agents" | "tools"> {
  agents: {
    defaults: AgentDefaults & { workspace: string };
    /** Named agents from the file and from `agents/*.md`, by name. */
    named: Record<string, AgentConfig>;
  };
  /** `tools` without `mcpServers` (those are merged into the top-level `mcpServers`). */
  tools: Omit<ToolsConfig, "mcpServers">;
  mcpServers: Record<string, McpServerConfig>;
}

/** JSON Schema of the configuration file (input form: defaults are optional), for editors. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
}
