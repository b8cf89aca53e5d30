/**
 * The Go nanobot's agent hooks in a turn (every face runs turns through `runTurnEngine`):
 * - `config` hooks run before the first model call and again before every later round; the
 *   agent they return replaces the configured one for the turn (tools, permissions,
 *   instructions, model settings). The built-in `nanobot.system/config` runs last, as in Go;
 *   here it is in-process and leaves the payload as it is, since `permissions` are applied
 *   when the agent's tools are built (src/agent/permissions.ts). `mcpServers: {name: {url,
 *   headers}}` in the result connects those servers for the agent to use.
 * - `request` / `response` hooks wrap each model call (src/mcp/hooks.ts); an agent a config
 *   hook returns brings its own, and its model, temperature, topP and maxTokens, for the
 *   rounds that follow.
 * A failing hook is a warning (logged, and a `warning` event) and the chain goes on.
 */
import { agentSchema } from "../config/schema-agents.js";
import type { AgentConfig, NanobotConfig } from "../config/index.js";
import { errorMessage } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import type { AgentHooks } from "../engine/hooks.js";
import { hookMappings, matchingTargets } from "../mcp/hook-keys.js";
import type { HookMapping } from "../mcp/hook-keys.js";
import type { HookCaller } from "../mcp/hooks.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import { refusedBuiltins } from "./permissions.js";
import type { AgentProfile, Runtime } from "./runtime.js";

export const SYSTEM_CONFIG_HOOK = "nanobot.system/config";

/** Go-style configs (named agents) see MCP tools by their own names; Python-style ones as `mcp_<server>_<tool>`. */
export function toolNamingFor(config: NanobotConfig): "go" | "python" {
  return Object.keys(config.agents.named).length > 0 ? "go" : "python";
}

export interface GoTurnInput {
  profile: AgentProfile;
  tools: readonly Tool[];
  messages: Message[];
  sessionKey: string;
  signal?: AbortSignal;
  warn: (message: string) => void;
}

export interface GoTurn {
  profile: AgentProfile;
  tools: readonly Tool[];
  messages: Message[];
  hooks: AgentHooks[];
  /** Tools a config hook took away (or its agent's permissions deny), with why: a call to one is refused so. */
  refused?: Record<string, string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hookCaller(runtime: Runtime): HookCaller {
  return async (server, tool, args, options) => {
    if (`${server}/${tool}` === SYSTEM_CONFIG_HOOK) return { content: [], structuredContent: args };
    const manager = await runtime.mcp();
    return manager.callTool(server, tool, args, { ...options, withoutMessageHooks: true });
  };
}

/** The agent's mappings with `nanobot.system/config` appended to `config` unless it is already there. */
function withSystemConfigHook(mappings: HookMapping[]): HookMapping[] {
  if (matchingTargets(mappings, "config").some((t) => t.target === SYSTEM_CONFIG_HOOK)) return mappings;
  return [...mappings, { key: "config", name: "config", params: {}, targets: [{ target: SYSTEM_CONFIG_HOOK, mutateDisallowed: false }] }];
}

function replaceInstructions(messages: Message[], from: string, to: string): Message[] {
  const first = messages[0];
  if (!first || first.role !== "system" || from.trim() === to.trim()) return messages;
  const content = first.content.map((p) => (p.text.includes(from.trim()) ? { ...p, text: p.text.replace(from.trim(), to.trim()) } : p));
  return [{ ...first, content }, ...messages.slice(1)];
}

/**
 * `mcpServers` a config hook returned: `{ name: { url, headers } }`, as in Go (a URL only, no
 * command). Go's own `nanobot.*` servers have no counterpart here and are skipped.
 */
async function addServers(runtime: Runtime, servers: unknown, warn: (message: string) => void): Promise<void> {
  if (!isRecord(servers)) return;
  for (const [name, value] of Object.entries(servers)) {
    if (name.startsWith("nanobot.")) continue;
    const url = isRecord(value) && typeof value.url === "string" ? value.url : "";
    if (!/^https?:\/\//.test(url)) {
      warn(`config hook returned mcpServers.${name} without an http(s) url; skipped`);
      continue;
    }
    const headers = isRecord(value) && isRecord(value.headers) ? (Object.fromEntries(Object.entries(value.headers).filter(([, v]) => typeof v === "string")) as Record<string, string>) : undefined;
    const failure = await runtime.addHookServer(name, { url, ...(headers ? { headers } : {}) });
    if (failure) warn(`config hook's MCP server ${name} failed to start: ${failure}`);
  }
}

/** What a call to a tool the config hook's agent no longer has gets instead of "not found". */
export function removedByConfigHook(tool: string): string {
  return `'${tool}' is not allowed: the agent's config hook (hooks.config) removed it from the agent's tools for this turn`;
}

/** Sets up the hooks of a turn and applies the first round's `config` hooks. */
export async function prepareGoTurn(runtime: Runtime, input: GoTurnInput): Promise<GoTurn> {
  const base = input.profile;
  const config = base.config;
  if (!config?.hooks || Object.keys(config.hooks).length === 0) return { ...input, hooks: [] };
  const call = hookCaller(runtime);
  const mappings = hookMappings(config.hooks);
  const hooks: AgentHooks[] = [];
  const hasConfigHooks = matchingTargets(mappings, "config").some((t) => t.target !== SYSTEM_CONFIG_HOOK);
  // Turn-bound tools (message, cron, spawn, goals) stay whatever the agent becomes.
  const profileTools = new Set(base.tools);
  const extras = input.tools.filter((t) => !profileTools.has(t));
  const left = new Set(base.tools.filter((t) => !input.tools.includes(t)).map((t) => t.name));
  const extraNames = new Set(extras.map((t) => t.name));
  const turnTools = (profile: AgentProfile): Tool[] => [...profile.tools.filter((t) => !left.has(t.name) && !extraNames.has(t.name)), ...extras];

  const { runHookChain, mcpHooks } = await import("../mcp/hooks.js");
  let applied = JSON.stringify(config);
  let profile = base;
  let tools: readonly Tool[] = input.tools;
  let messages = input.messages;
  let instructionsFix: { from: string; to: string } | undefined;
  let refused: Record<string, string> | undefined;
  const offered = new Set(input.tools.map((t) => t.name));

  /** Runs the config chain; returns the new profile when the agent changed. */
  const runConfig = async (): Promise<AgentProfile | undefined> => {
    const payload = { agent: JSON.parse(applied) as Record<string, unknown>, sessionId: input.sessionKey };
    const result = await runHookChain(call, withSystemConfigHook(mappings), "config", payload, input.signal ? { signal: input.signal } : {});
    for (const w of result.warnings) input.warn(w);
    await addServers(runtime, result.payload.mcpServers, input.warn);
    if (!isRecord(result.payload.agent)) return undefined;
    const parsed = agentSchema.safeParse(result.payload.agent);
    if (!parsed.success) {
      input.warn(`config hook returned an agent that is not valid, keeping the previous one: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      return undefined;
    }
    const next = JSON.stringify(parsed.data);
    if (next === applied) return undefined;
    applied = next;
    const agent: AgentConfig = parsed.data;
    try {
      return await runtime.resolveAgent(base.name, { agent, ...(agent.model === config.model ? { modelRef: base.modelRef } : {}) });
    } catch (err) {
      input.warn(`config hook returned an agent that cannot run, keeping the previous one: ${errorMessage(err)}`);
      return undefined;
    }
  };

  // Request / response hooks: the current agent's, so an agent a config hook returns brings its own.
  const modelHooksFor = (hooksConfig: AgentConfig["hooks"]): AgentHooks | undefined => {
    const m = hookMappings(hooksConfig);
    return matchingTargets(m, "request").length + matchingTargets(m, "response").length > 0 ? mcpHooks(call, hooksConfig, { warn: input.warn }) : undefined;
  };
  let modelHooks = modelHooksFor(config.hooks);
  let modelHooksKey = JSON.stringify(config.hooks ?? {});

  const adopt = (next: AgentProfile): void => {
    instructionsFix = next.instructions === base.instructions ? undefined : { from: base.instructions, to: next.instructions };
    profile = { ...next, model: next.modelRef === base.modelRef ? base.model : next.model };
    tools = turnTools(next);
    const now = new Set(tools.map((t) => t.name));
    for (const t of tools) offered.add(t.name);
    const removed = [...offered].filter((name) => !now.has(name)).map((name) => [name, removedByConfigHook(name)] as const);
    // A built-in the returned agent's permissions deny says so (the more precise reason).
    refused = { ...Object.fromEntries(removed), ...refusedBuiltins(next.config?.permissions, tools) };
    const key = JSON.stringify(next.config?.hooks ?? {});
    if (key !== modelHooksKey) {
      modelHooksKey = key;
      modelHooks = modelHooksFor(next.config?.hooks);
    }
  };

  if (hasConfigHooks) {
    const next = await runConfig();
    if (next) {
      adopt(next);
      if (instructionsFix) messages = replaceInstructions(messages, instructionsFix.from, instructionsFix.to);
    }
    hooks.push({
      async beforeIteration(ctx, request) {
        if (ctx.iteration <= 1) return undefined;
        const modelBefore = profile.model;
        const changed = await runConfig();
        if (changed) adopt(changed);
        if (!changed && !instructionsFix) return undefined;
        const messagesNow = instructionsFix ? replaceInstructions(request.messages, instructionsFix.from, instructionsFix.to) : request.messages;
        if (!changed) return { request: { ...request, messages: messagesNow } };
        const defs = new ToolRegistry(tools).definitions();
        // What Go takes from the returned agent for the next call: tools, instructions, model and its settings.
        const { maxTokens: _sent, ...rest } = request;
        const limit = profile.omitMaxTokens ? {} : { maxTokens: profile.maxTokens };
        return {
          request: { ...rest, ...limit, temperature: profile.temperature, topP: profile.topP, messages: messagesNow, ...(request.tools ? { tools: defs } : {}) },
          tools,
          ...(refused ? { refusedTools: refused } : {}),
          ...(profile.model !== modelBefore ? { model: profile.model } : {}),
        };
      },
    });
  }
  // Always installed when the agent has hooks: a config hook may return an agent that has request/response hooks.
  hooks.push({
    beforeIteration: (ctx, request) => modelHooks?.beforeIteration?.(ctx, request),
    afterResponse: (ctx, response) => modelHooks?.afterResponse?.(ctx, response),
    afterRun: (ctx, result) => modelHooks?.afterRun?.(ctx, result),
  });
  return { profile, tools, messages, hooks, ...(refused ? { refused } : {}) };
}
