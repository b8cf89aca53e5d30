/**
 * Go agent fields (and `env` flags) nanobot accepts but does not act on, each named with the
 * reason, so a Go config's setting is never dropped silently (`config check` and every command
 * print these).
 */
import type { NanobotConfig } from "./schema.js";
import type { AgentConfig } from "./schema-agents.js";

const NOTES: Array<{ keys: Array<keyof AgentConfig>; reason: string }> = [
  // starterMessages are honoured: the MCP server publishes them as prompts (src/gateway/mcp/starter-prompts.ts).
  { keys: ["shortName", "icon", "iconDark"], reason: "display fields of the Go web UI; nanobot's faces do not show them" },
  { keys: ["mimeTypes"], reason: "has no effect (the Go nanobot does not use it either); attachments are accepted by type as usual" },
  { keys: ["resources"], reason: "Go lists them to its own web UI's agent session; nanobot's faces do not (an agent's MCP servers' resources are read through their tools)" },
  { keys: ["aliases", "cost", "speed", "intelligence"], reason: "Go's sampling model-selection hints; nanobot picks the sampling agent by name hint only" },
  { keys: ["toolOutputMaxLines", "toolOutputMaxBytes", "disableToolTruncation"], reason: "not used: tool output is cut at 50 KiB (a tool can opt out with the ai.nanobot.meta/skip-truncation _meta)" },
];

export function agentFieldNotes(config: NanobotConfig, file: string): string[] {
  const out: string[] = [];
  const chat = Object.keys(config.agents.named).filter((name) => config.agents.named[name]?.chat !== false);
  if (chat.length > 1 && (config.publish.entrypoint ?? []).length === 0) {
    const published = chat.find((name) => config.agents.named[name]?.default === true) ?? chat[0];
    out.push(
      `${file}: publish.entrypoint is not set and there are ${chat.length} chat agents (${chat.join(", ")}); the Go nanobot refuses this, nanobot publishes only "${published}" over MCP (set publish.entrypoint to choose)`,
    );
  }
  for (const [name, entry] of Object.entries(config.env)) {
    if (typeof entry !== "string" && entry.useBearerToken === true) {
      out.push(`${file}: env.${name}.useBearerToken: not supported (the Go nanobot fills it from the MCP caller's bearer token); set ${name} in the environment`);
    }
  }
  for (const [name, agent] of Object.entries(config.agents.named)) {
    for (const note of NOTES) {
      const set = note.keys.filter((k) => agent[k] !== undefined);
      if (set.length > 0) out.push(`${file}: agents.${name}: ${set.join(", ")}: ${note.reason}`);
    }
  }
  return out;
}
