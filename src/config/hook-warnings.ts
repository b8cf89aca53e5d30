/**
 * `config check` notes for the Go hook blocks, so a hook that can never run is not silent:
 * an agent hook name other than config / request / response (or `*`), an MCP message hook
 * for the handshake (not hooked) or for a name that is no MCP method, and a target that names
 * a server the config does not have.
 */
import { parseHookKey } from "../mcp/hook-keys.js";
import { MCP_METHODS, UNHOOKED_METHODS } from "../mcp/message-hooks.js";
import type { NanobotConfig } from "./schema.js";

const AGENT_HOOKS = new Set(["config", "request", "response", "*"]);
const MESSAGE_HOOKS = new Set<string>([...MCP_METHODS, "*"]);
const HANDSHAKE = new Set<string>(UNHOOKED_METHODS);
/** Go's built-in config hook: handled in-process, not an MCP server of the config. */
const BUILTIN_TARGETS = new Set(["nanobot.system/config"]);

type HookBlock = Record<string, string | ReadonlyArray<string | Record<string, unknown>>>;

function targetsOf(value: HookBlock[string]): string[] {
  const list = typeof value === "string" ? [value] : value;
  return list
    .map((t) => (typeof t === "string" ? t : typeof t.target === "string" ? t.target : ""))
    .map((t) => t.replace(/^!mutate:/, "").trim())
    .filter(Boolean);
}

function unknownTargets(config: NanobotConfig, file: string, where: string, block: HookBlock): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(block)) {
    for (const target of targetsOf(value)) {
      if (BUILTIN_TARGETS.has(target)) continue;
      const server = target.split("/")[0] ?? "";
      if (!target.includes("/")) out.push(`${file}: ${where}."${key}": "${target}" is not a server/tool reference; the hook never runs`);
      else if (!config.mcpServers[server]) out.push(`${file}: ${where}."${key}" names "${target}", but "${server}" is not in mcpServers; the hook fails at every call`);
    }
  }
  return out;
}

export function hookWarnings(config: NanobotConfig, file: string): string[] {
  const out: string[] = [];
  for (const [name, agent] of Object.entries(config.agents.named)) {
    if (!agent.hooks) continue;
    const where = `agents.${name}.hooks`;
    for (const key of Object.keys(agent.hooks)) {
      if (!AGENT_HOOKS.has(parseHookKey(key).name)) out.push(`${file}: ${where}."${key}" is not a hook an agent runs (config, request, response); it never runs`);
    }
    out.push(...unknownTargets(config, file, where, agent.hooks));
  }
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (!server.hooks) continue;
    const where = `mcpServers.${name}.hooks`;
    for (const key of Object.keys(server.hooks)) {
      const method = parseHookKey(key).name;
      if (HANDSHAKE.has(method)) out.push(`${file}: ${where}."${key}": the MCP handshake (${UNHOOKED_METHODS.join(", ")}) is not hooked; this hook never runs`);
      else if (!MESSAGE_HOOKS.has(method)) out.push(`${file}: ${where}."${key}": "${method}" is not an MCP method a client sends or receives; this hook never runs`);
    }
    out.push(...unknownTargets(config, file, where, server.hooks));
  }
  return out;
}
