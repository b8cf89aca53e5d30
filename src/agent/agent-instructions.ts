/**
 * A named agent's system prompt at turn time (Go nanobot dynamic instructions): literal text,
 * text with `${…}` references, or an MCP prompt. Resolved for every turn, so `${nanobot:time}`
 * is current and a server can change its prompt without a restart. Also the context that
 * `publish.introduction` and top-level `prompts` templates expand in.
 */
import { declaredEnv } from "../config/interpolate.js";
import type { NanobotConfig } from "../config/index.js";
import type { AgentInstructions } from "../config/schema-agents.js";
import type { McpClientManager } from "../mcp/manager.js";
import { expandTemplate, hasTemplate, resolvePromptInstructions } from "../mcp/instructions.js";
import type { ExpandContext, InlinePrompt } from "../mcp/instructions.js";

export interface InstructionSource {
  readonly config: NanobotConfig;
  readonly env: Record<string, string | undefined>;
  /** The MCP manager (connecting the configured servers on first use). */
  mcp(): Promise<McpClientManager>;
}

/** `${servers.X…}` (or any expression using `servers`) needs the servers connected (their initialize result holds it). */
const NEEDS_SERVERS = /\$\{[^}]*\bservers\b/;

/** The expansion context for text at `where`; connects MCP servers only when the text needs them. */
export async function expandContextFor(source: InstructionSource, where: string, text = ""): Promise<ExpandContext> {
  const serverNames = Object.keys(source.config.mcpServers);
  const manager = NEEDS_SERVERS.test(text) && serverNames.length > 0 ? await source.mcp() : undefined;
  return {
    env: source.env,
    envDefaults: declaredEnv(source.config.env).defaults,
    serverNames,
    serverInstructions: (server) => manager?.instructions(server),
    where,
  };
}

/** Expands a string or fetches an MCP prompt (`{mcpServer, prompt, args}`). Throws ConfigError. */
export async function resolveDynamicText(source: InstructionSource, spec: AgentInstructions, where: string, signal?: AbortSignal): Promise<string> {
  if (typeof spec === "string") {
    if (!hasTemplate(spec)) return spec;
    return expandTemplate(spec, await expandContextFor(source, where, spec));
  }
  const prompts = (source.config as { prompts?: Record<string, InlinePrompt> }).prompts;
  const isInline = prompts?.[spec.prompt] !== undefined && spec.mcpServer === spec.prompt;
  const manager = isInline ? undefined : await source.mcp();
  // An inline template's own `${servers…}` needs the servers as much as the args do.
  const template = isInline ? (prompts[spec.prompt]?.template ?? "") : "";
  const ctx = await expandContextFor(source, where, `${JSON.stringify(spec.args ?? {})}${template}`);
  return resolvePromptInstructions(manager, spec as { mcpServer: string; prompt: string; args?: Record<string, string> }, { ...ctx, prompts }, signal);
}
