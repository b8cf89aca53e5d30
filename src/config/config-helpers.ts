/** Small questions other layers ask of a resolved configuration. */
import type { NanobotConfig } from "./schema.js";

/** `localhost`, `127.x.x.x` and `::1` — hosts only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * The agent that answers when none is named: the one marked `default: true`, else the first
 * `publish.entrypoint`, else the only named agent. Undefined means "agents.defaults alone".
 */
export function defaultAgentName(config: NanobotConfig): string | undefined {
  const named = config.agents.named;
  const marked = Object.keys(named).find((name) => named[name]?.default === true);
  if (marked) return marked;
  const entry = config.publish.entrypoint?.[0];
  if (entry && named[entry]) return entry;
  const names = Object.keys(named);
  return names.length === 1 ? names[0] : undefined;
}

/** The model the default agent uses, if any is configured. */
export function defaultModel(config: NanobotConfig): string | undefined {
  const agent = defaultAgentName(config);
  return (agent ? config.agents.named[agent]?.model : undefined) ?? config.agents.defaults.model;
}

/**
 * The resolved config in the file's own shape (named agents back beside `defaults`), for
 * printing: what `config check` shows can be pasted back into a file.
 */
export function toFileShape(config: NanobotConfig): Record<string, unknown> {
  const { agents, ...rest } = config;
  return { ...rest, agents: { defaults: agents.defaults, ...agents.named } };
}
