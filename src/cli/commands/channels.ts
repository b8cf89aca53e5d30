/**
 * `nanobot channels list`: each configured chat channel with its type, whether it is enabled,
 * connected, and its last error. Asked of the running gateway (`GET /api/channels`) when one
 * answers at `gateway.host:port`; otherwise read from the config, where "connected" is unknown.
 */
import type { Command } from "commander";
import { configuredChannels } from "../../channels/channel-manager.js";
import type { ChannelListEntry } from "../../channels/channel-manager.js";
import type { LoadedConfig } from "../../config/load.js";
import { errorMessage } from "../../core/errors.js";
import { scrubSecretText } from "../../core/scrub.js";
import type { CliContext } from "../context.js";
import { registerChannelsLogin } from "./channels-login.js";

const ASK_TIMEOUT_MS = 2000;

interface ChannelsReport {
  source: "gateway" | "config";
  gateway: string;
  /** Why the gateway was not asked or did not answer (source "config"). */
  note?: string;
  channels: ChannelListEntry[];
}

/** Where a local client reaches the configured gateway (a wildcard bind is reached on loopback). */
export function gatewayBaseUrl(host: string, port: number): string {
  const reach = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host;
  return `http://${reach}:${port}`;
}

async function askGateway(base: string, apiKey: string | undefined): Promise<ChannelListEntry[] | string> {
  try {
    const response = await fetch(`${base}/api/channels`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (response.status === 401) return "the gateway refused gateway.apiKey";
    if (!response.ok) return `the gateway answered HTTP ${response.status}`;
    const body = (await response.json()) as { channels?: ChannelListEntry[] };
    return Array.isArray(body.channels) ? body.channels : "the gateway's answer has no channel list";
  } catch (error) {
    return `no gateway answered (${errorMessage(error)})`;
  }
}

export async function channelsReport(loaded: LoadedConfig): Promise<ChannelsReport> {
  const { gateway } = loaded.config;
  const base = gatewayBaseUrl(gateway.host, gateway.port);
  const answer = await askGateway(base, gateway.apiKey);
  if (typeof answer !== "string") return { source: "gateway", gateway: base, channels: answer };
  const channels = configuredChannels(loaded.config.channels).map((c) => ({ ...c, connected: null }));
  return { source: "config", gateway: base, note: answer, channels };
}

export function registerChannelsCommand(program: Command, ctx: CliContext): void {
  const channels = program.command("channels").description("the chat channels and their connections");

  channels
    .command("list")
    .description("type, enabled, connected and last error of every configured channel (from the running gateway, else the config)")
    .option("--json", "print one JSON object")
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const loaded = await ctx.loadConfig(cmd);
      ctx.printWarnings(loaded.warnings);
      const report = await channelsReport(loaded);
      if (opts.json) return void ctx.io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      const where = report.source === "gateway" ? `from the gateway at ${report.gateway}` : `from the config: ${report.note ?? "no gateway"} at ${report.gateway}`;
      ctx.io.stderr.write(`${where}\n`);
      if (report.channels.length === 0) return void ctx.io.stdout.write("no channels configured\n");
      const yesNo = (v: boolean | null): string => (v === null ? "?" : v ? "yes" : "no");
      const rows = report.channels.map((c) => [c.name, c.type, yesNo(c.enabled), c.enabled ? yesNo(c.connected) : "-", scrubSecretText(c.lastError ?? "")]);
      ctx.io.stdout.write(table(["NAME", "TYPE", "ENABLED", "CONNECTED", "LAST ERROR"], rows));
    });

  registerChannelsLogin(channels, ctx);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}
