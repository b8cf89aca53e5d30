/**
 * From a raw document to the resolved `NanobotConfig`: normalise keys, interpolate `${VAR}`,
 * validate, then fill what depends on the environment (workspace, env providers) and merge
 * what both nanobot dialects spread over two places (MCP servers, named agents).
 */
import { ConfigError } from "../core/errors.js";
import { PRESET_DEFAULTS, checkModelPresets } from "./model-presets.js";
import { channelSettingNotes, unknownChannelTypes } from "../channels/channel-types.js";
import { agentFieldNotes } from "./agent-field-notes.js";
import { isLoopbackHost } from "./config-helpers.js";
import { GO_UNSUPPORTED_KEYS } from "./go-keys.js";
import { hookWarnings } from "./hook-warnings.js";
import { providersFromEnv } from "./env-providers.js";
import { declaredEnv, interpolateConfig } from "./interpolate.js";
import type { DeclaredEnv, Env } from "./interpolate.js";
import { normalizeConfig } from "./normalize.js";
import { applyProviderApiType, applyTimezoneMode, takeUnsupportedKeys } from "./python-keys.js";
import type { PlainObject } from "./normalize.js";
import { defaultWorkspace, resolvePath } from "./paths.js";
import { configSchema } from "./schema.js";
import type { NanobotConfig } from "./schema.js";
import type { AgentConfig } from "./schema-agents.js";
import type { McpServerConfig } from "./schema-tools.js";
import { validateWith } from "./validate.js";

/** `channels.sendProgress` / `sendToolHints` as the Python nanobot's ChannelsConfig defaults them. */
const PYTHON_CHANNEL_SWITCHES = { sendProgress: true, sendToolHints: true } as const;

export interface ResolveOptions {
  /** Name used in messages (`config.json`, `./my.yaml`). */
  file: string;
  env: Env;
  /** Base for relative paths in the file (its directory). */
  baseDir: string;
  /** `$NANOBOT_HOME`, for the default workspace. */
  home: string;
  /** Named agents from an `agents/*.md` directory, already validated. */
  extraAgents?: Record<string, AgentConfig>;
  /** Add providers from OPENAI_API_KEY & co. (default true). */
  envProviders?: boolean;
}

export interface Resolved {
  config: NanobotConfig;
  warnings: string[];
  /** Provider names that came from environment variables. */
  envProviders: string[];
}

/** Normalises and interpolates a raw document; exposes the declared env for `agents/*.md`. */
export function prepareDocument(raw: PlainObject, file: string, env: Env): { doc: PlainObject; declared: DeclaredEnv; warnings: string[] } {
  const normalized = normalizeConfig(raw);
  const declared = declaredEnv(normalized.value.env);
  const literal: string[] = [];
  const doc = interpolateConfig(normalized.value, { env, file, declared, literalExpressions: literal });
  return { doc, declared, warnings: [...normalized.warnings, ...literal].map((w) => `${file}: ${w}`) };
}

/** Resolves an already-prepared document (see `prepareDocument`). Throws ConfigError. */
export function resolveDocument(doc: PlainObject, opts: ResolveOptions): Resolved {
  // Python keys nanobot does not act on: one "not supported" line each, then out of the way.
  const working = structuredClone(doc);
  applyTimezoneMode(working);
  const apiTypeWarnings = applyProviderApiType(working, opts.file);
  const unsupported = [...apiTypeWarnings, ...takeUnsupportedKeys(working, opts.file), ...takeUnsupportedKeys(working, opts.file, GO_UNSUPPORTED_KEYS)];
  const { value: parsed, warnings } = validateWith(configSchema, working, opts.file);
  warnings.unshift(...unsupported);
  const { defaults, ...fileAgents } = parsed.agents;
  const { mcpServers: toolServers, ...tools } = parsed.tools;

  const named: Record<string, AgentConfig> = { ...opts.extraAgents };
  for (const [name, agent] of Object.entries(fileAgents)) {
    if (named[name]) warnings.push(`${opts.file}: agents.${name} is also defined in agents/${name}.md; merging, the file's fields win`);
    named[name] = { ...named[name], ...agent };
  }

  const mcpServers: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(toolServers ?? {})) mcpServers[name] = server;
  for (const [name, server] of Object.entries(parsed.mcpServers)) {
    if (mcpServers[name]) warnings.push(`${opts.file}: mcpServers.${name} is also in tools.mcpServers; using mcpServers.${name}`);
    mcpServers[name] = server;
  }
  for (const [name, server] of Object.entries(mcpServers)) mcpServers[name] = finishServer(server, opts);

  const providers = { ...parsed.providers };
  const envProviders: string[] = [];
  if (opts.envProviders !== false) {
    for (const [name, p] of Object.entries(providersFromEnv(opts.env))) {
      const existing = providers[name];
      if (existing?.apiKey) continue;
      const merged = { ...existing, apiKey: p.apiKey, api: existing?.api ?? p.api };
      const apiBase = existing?.apiBase ?? p.apiBase;
      providers[name] = apiBase ? { ...merged, apiBase } : merged;
      envProviders.push(name);
    }
  }

  const workspace = resolvePath(defaults.workspace ?? defaultWorkspace(opts.home), opts.baseDir, opts.env);
  // A Python-style config (no named agents) keeps the Python channel switches' defaults: the
  // model's text before its tool calls and the tool hints reach the chat (both true).
  const pythonStyle = Object.keys(named).length === 0;
  const channels = pythonStyle ? { ...PYTHON_CHANNEL_SWITCHES, ...parsed.channels } : parsed.channels;
  // Python's temperature (0.1) and max tokens (8192) defaults; a Go-style config sends no
  // temperature, and Go's adapter default for max tokens (src/agent/go-max-tokens.ts), unless the file sets them.
  const temperature = defaults.temperature ?? (pythonStyle ? PRESET_DEFAULTS.temperature : undefined);
  const maxTokens = defaults.maxTokens ?? (pythonStyle ? PRESET_DEFAULTS.maxTokens : undefined);
  const config: NanobotConfig = {
    ...parsed,
    channels,
    providers,
    agents: { defaults: { ...defaults, workspace, ...(temperature !== undefined ? { temperature } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}) }, named },
    tools,
    mcpServers,
  };
  checkRequiredEnv(config, opts);
  checkModelPresets(config, opts.file);
  warnings.push(...semanticWarnings(config, opts.file));
  if (config.store?.maxLeaseConnections !== undefined && !config.store.url && !opts.env["NANOBOT_STORE_URL"]?.trim()) {
    warnings.push(`${opts.file}: store.maxLeaseConnections applies to a PostgreSQL store only (no store.url or NANOBOT_STORE_URL: SQLite); ignored`);
  }
  return { config, warnings, envProviders };
}

/**
 * Go nanobot `env:` entries are required unless `optional: true` or given a `default` (a bare
 * string is only a description): a missing one stops here, named, instead of failing later.
 */
function checkRequiredEnv(config: NanobotConfig, opts: ResolveOptions): void {
  const missing: string[] = [];
  for (const [name, entry] of Object.entries(config.env)) {
    const def = typeof entry === "string" ? { description: entry } : entry;
    if (def.optional === true || (def.default !== undefined && def.default !== "")) continue;
    if (!opts.env[name]) missing.push(def.description ? `${name} (${def.description.trim()})` : name);
  }
  if (missing.length === 0) return;
  throw new ConfigError(
    `${opts.file}: env: required environment variable${missing.length > 1 ? "s" : ""} not set: ${missing.join(", ")} (set ${missing.length > 1 ? "them" : "it"}, or mark the entry optional: true)`,
    { file: opts.file, path: "env", expected: "the environment variables the config declares" },
  );
}

/**
 * Infers stdio for a command and makes `cwd` absolute. A URL without `type` stays open: the
 * MCP host picks SSE for a `/sse` path, else Streamable HTTP with a fallback to SSE.
 */
function finishServer(server: McpServerConfig, opts: ResolveOptions): McpServerConfig {
  const out: McpServerConfig = { ...server };
  if (!out.type && out.command) out.type = "stdio";
  if (out.cwd) out.cwd = resolvePath(out.cwd, opts.baseDir, opts.env);
  return out;
}

/** Valid but probably unintended settings. */
function semanticWarnings(config: NanobotConfig, file: string): string[] {
  const out: string[] = [];
  if (!isLoopbackHost(config.gateway.host) && !config.gateway.apiKey) {
    out.push(`${file}: gateway.host is ${config.gateway.host} (not loopback) but gateway.apiKey is not set; the gateway will refuse to start`);
  }
  const defaults = Object.entries(config.agents.named).filter(([, a]) => a.default === true);
  if (defaults.length > 1) {
    out.push(`${file}: several agents have default: true (${defaults.map(([n]) => n).join(", ")}); using ${defaults[0]![0]}`);
  }
  for (const [name, agent] of Object.entries(config.agents.named)) {
    for (const server of agent.mcpServers ?? []) {
      if (!config.mcpServers[server]) out.push(`${file}: agents.${name}.mcpServers names "${server}", which is not in mcpServers`);
    }
  }
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (!server.command && !server.url) out.push(`${file}: mcpServers.${name} has neither command nor url`);
  }
  out.push(...agentFieldNotes(config, file));
  out.push(...hookWarnings(config, file));
  // `config check` turns these into an error; elsewhere a Python config with discord still runs.
  out.push(...unknownChannelTypes(config.channels).map((p) => `${file}: ${p.message}`));
  out.push(...channelSettingNotes(config.channels).map((note) => `${file}: ${note}`));
  return out;
}
