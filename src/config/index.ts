export { configJsonSchema, configSchema } from "./schema.js";
export type { NanobotConfig, ParsedConfig } from "./schema.js";
export type { AgentConfig, AgentDefaults, AgentInstructions } from "./schema-agents.js";
export type { McpServerConfig, ToolsConfig } from "./schema-tools.js";
export type { ChannelConfig, EnvEntry, GatewayConfig, PublishConfig } from "./schema-misc.js";
export { dialectToApi, LLM_DIALECTS, PROVIDER_APIS } from "./schema-providers.js";
export type { LlmDialect, ProviderApi } from "./schema-providers.js";
export { loadConfig, resolveConfig } from "./load.js";
export type { LoadConfigOptions, LoadedConfig } from "./load.js";
export { locateConfig } from "./lookup.js";
export type { ConfigLocation, ConfigSource } from "./lookup.js";
export { defaultAgentName, defaultModel, isLoopbackHost, toFileShape } from "./config-helpers.js";
export { isSecretKey, maskSecrets, maskValue } from "./mask.js";
export { interpolateString } from "./interpolate.js";
export type { Env } from "./interpolate.js";
export { providersFromEnv } from "./env-providers.js";
export { splitFrontMatter } from "./agents-dir.js";
export {
  defaultWorkspace,
  expandHome,
  logsDir,
  nanobotHome,
  resolvePath,
  sessionsDir,
  stateDbPath,
  userHome,
} from "./paths.js";
