/**
 * `nanobot status`: where the config came from and what it configures, secrets masked (keys,
 * MCP command-line args, URL userinfo and query tokens — through config/mask.ts).
 */
import type { Command } from "commander";
import { isKnownChannelType } from "../../channels/channel-types.js";
import { defaultAgentName, defaultModel } from "../../config/config-helpers.js";
import type { LoadedConfig } from "../../config/load.js";
import { maskCommandLine, maskValue } from "../../config/mask.js";
import { sandboxProbeCacheFile } from "../../config/paths.js";
import { scrubSecretText } from "../../core/scrub.js";
import { describeSandbox, resolveSandbox } from "../../tools/builtin/sandbox-mode.js";
import { detectTransportType } from "../../mcp/server-spec.js";
import type { CliContext } from "../context.js";

/** A plain summary, also printed as JSON by `status --json`. */
export interface StatusReport {
  version: string;
  config: string | null;
  configSource: string;
  home: string;
  workspace: string;
  model: string | null;
  defaultAgent: string | null;
  providers: Array<{ name: string; apiBase?: string; apiKey?: string; fromEnv?: boolean; dialect?: string }>;
  mcpServers: Array<{ name: string; transport: string; target: string }>;
  agents: string[];
  channels: string[];
  /** Enabled entries of a channel type nanobot does not have: never started, so not in `channels`. */
  unsupportedChannels: string[];
  /** Where `exec` runs: "bwrap (…)", or "none — why", or "disabled". */
  sandbox: string;
}

export function statusReport(loaded: LoadedConfig, version: string): StatusReport {
  const { config } = loaded;
  const providers: StatusReport["providers"] = [];
  for (const [name, p] of Object.entries(config.providers)) {
    // The Python template lists every provider with an empty key; those are not configured.
    if (!p.apiKey && !p.apiBase) continue;
    providers.push({
      name,
      ...(p.apiBase ? { apiBase: scrubSecretText(p.apiBase) } : {}),
      ...(p.apiKey ? { apiKey: maskValue(p.apiKey) } : {}),
      ...(loaded.envProviders.includes(name) ? { fromEnv: true } : {}),
    });
  }
  for (const [name, p] of Object.entries(config.llmProviders)) {
    providers.push({
      name,
      ...(p.baseURL ? { apiBase: scrubSecretText(p.baseURL) } : {}),
      ...(p.apiKey ? { apiKey: maskValue(p.apiKey) } : {}),
      ...(p.dialect ? { dialect: p.dialect } : {}),
    });
  }
  const mcpServers = Object.entries(config.mcpServers).map(([name, s]) => ({
    name,
    transport: detectTransportType(s),
    target: s.type === "stdio" ? maskCommandLine(s.command ?? "", s.args ?? []) : scrubSecretText(s.url ?? ""),
  }));
  const enabled = Object.entries(config.channels).filter(([, c]) => typeof c === "object" && c.enabled);
  const channels = enabled.filter(([name, c]) => isKnownChannelType(name, c)).map(([name]) => name);
  const unsupportedChannels = enabled.filter(([name, c]) => !isKnownChannelType(name, c)).map(([name]) => name);
  return {
    version,
    config: loaded.path ?? null,
    configSource: loaded.source,
    home: loaded.home,
    workspace: config.agents.defaults.workspace,
    model: defaultModel(config) ?? null,
    defaultAgent: defaultAgentName(config) ?? null,
    providers,
    mcpServers,
    agents: Object.keys(config.agents.named),
    channels,
    unsupportedChannels,
    sandbox: config.tools.exec.enable
      ? describeSandbox(
          // Always a fresh probe, whose verdict the next `agent` start then uses.
          resolveSandbox({ setting: config.tools.exec.sandbox, restrictToWorkspace: config.tools.restrictToWorkspace, cacheFile: sandboxProbeCacheFile(loaded.home) }),
          config.tools.exec.network,
        )
      : "exec disabled",
  };
}

export function registerStatusCommand(program: Command, ctx: CliContext): void {
  program
    .command("status")
    .description("show the config file, model, providers, MCP servers, agents and channels")
    .option("--json", "print one JSON object")
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const loaded = await ctx.loadConfig(cmd);
      ctx.printWarnings(loaded.warnings);
      const report = statusReport(loaded, ctx.version);
      // The whole text too: a config secret can reappear anywhere (a workspace path, an agent name).
      ctx.io.stdout.write(scrubSecretText(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report, ctx)));
    });
}

function renderStatus(r: StatusReport, ctx: CliContext): string {
  const c = ctx.colors.out;
  const none = (text: string) => c.dim(text);
  const line = (label: string, value: string) => `${c.bold(label.padEnd(12))} ${value}\n`;
  const providers = r.providers.length
    ? r.providers
        .map((p) => {
          const details = [p.dialect, p.apiBase, p.apiKey ? `key ${p.apiKey}` : undefined, p.fromEnv ? "from env" : undefined];
          return `${p.name} (${details.filter(Boolean).join(", ")})`;
        })
        .join(", ")
    : none("none — set OPENAI_API_KEY or ANTHROPIC_API_KEY, or run `nanobot onboard`");
  const servers = r.mcpServers.length
    ? r.mcpServers.map((s) => `${s.name} (${s.transport}: ${s.target})`).join(", ")
    : none("none");
  const agents = r.agents.length
    ? r.agents.map((a) => (a === r.defaultAgent ? `${a} (default)` : a)).join(", ")
    : none("none (agents.defaults only)");
  return (
    line("nanobot", r.version) +
    line("config", r.config ? `${r.config} (${r.configSource})` : "none (defaults)") +
    line("home", r.home) +
    line("workspace", r.workspace) +
    line("model", r.model ?? none("not set")) +
    line("providers", providers) +
    line("mcp servers", servers) +
    line("agents", agents) +
    line("channels", (r.channels.length ? r.channels.join(", ") : none("none enabled")) + (r.unsupportedChannels.length ? c.yellow(` (not started, not a nanobot channel: ${r.unsupportedChannels.join(", ")})`) : "")) +
    line("sandbox", r.sandbox.startsWith("none") ? c.yellow(r.sandbox) : r.sandbox)
  );
}
