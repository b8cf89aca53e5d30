/**
 * `nanobot mcp list [--json]`: connects to every configured MCP server and prints what the
 * model would see from each (tool names as exposed, descriptions, kind), or why it failed.
 * Exit 1 when any server failed, so scripts can check a config's servers in one call.
 */
import type { Command } from "commander";
import { scrubSecretText } from "../../core/scrub.js";
import type { ListedServer } from "../../mcp/list-servers.js";
import type { CliContext } from "../context.js";
import { oauthDirFor } from "../../mcp/oauth/token-store.js";
import { registerMcpLoginCommands } from "./mcp-login.js";

interface ListOptions {
  json?: boolean;
  timeout: string;
}

/** Longest description kept on one line of the human listing. */
const DESCRIPTION_WIDTH = 80;

export function registerMcpCommand(program: Command, ctx: CliContext): void {
  const mcp = program.command("mcp").description("inspect the configured MCP servers");
  mcp
    .command("list")
    .description("connect to every configured MCP server and list its tools, or why it failed")
    .option("--json", "print one JSON array: [{ server, tools: [{ name, description, sourceTool, kind }], error?, unmatchedEnabledTools? }]")
    .option("--timeout <seconds>", "handshake limit for servers without their own connectTimeout", "20")
    .action(async (opts: ListOptions, command: Command) => {
      const seconds = Number(opts.timeout);
      if (!Number.isFinite(seconds) || seconds <= 0) {
        ctx.io.stderr.write(`error: --timeout expects a positive number of seconds, got ${JSON.stringify(opts.timeout)}\n`);
        ctx.exitCode = 2;
        return;
      }
      const loaded = await ctx.loadConfig(command);
      ctx.printWarnings(loaded.warnings);
      const [{ listServers }, { toolNamingFor }] = await Promise.all([import("../../mcp/list-servers.js"), import("../../agent/go-hooks.js")]);
      // Tool names as a turn offers them: bare for a Go-style config, mcp_<server>_<tool> otherwise.
      const servers = await listServers(loaded.config.mcpServers, {
        env: ctx.io.env,
        connectTimeoutMs: seconds * 1000,
        toolNaming: toolNamingFor(loaded.config),
        oauthDir: oauthDirFor(loaded.home),
      });
      // A failed server's error quotes its stderr, which may echo its args or env.
      if (opts.json) ctx.io.stdout.write(scrubSecretText(`${JSON.stringify(servers, null, 2)}\n`));
      else ctx.io.stdout.write(scrubSecretText(renderServers(ctx, servers)));
      if (servers.some((s) => s.error !== undefined)) ctx.exitCode = 1;
    });
  registerMcpLoginCommands(mcp, ctx);
}

function renderServers(ctx: CliContext, servers: readonly ListedServer[]): string {
  const c = ctx.colors.out;
  if (servers.length === 0) return "no MCP servers configured (add them under mcpServers or tools.mcpServers)\n";
  let out = "";
  for (const s of servers) {
    if (s.error !== undefined) {
      out += `${c.bold(s.server)}  ${c.red("failed:")} ${s.error}\n\n`;
      continue;
    }
    out += `${c.bold(s.server)}  ${c.dim(`${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}`)}\n`;
    for (const t of s.tools) {
      const kind = t.kind === "tool" ? "" : c.dim(` (${t.kind} ${t.sourceTool})`);
      out += `  ${c.cyan(t.name)}${kind}  ${oneLine(t.description)}\n`;
    }
    if (s.unmatchedEnabledTools) out += `  ${c.yellow("enabledTools names no such tool:")} ${s.unmatchedEnabledTools.join(", ")}\n`;
    out += "\n";
  }
  return out;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > DESCRIPTION_WIDTH ? `${flat.slice(0, DESCRIPTION_WIDTH - 1)}…` : flat;
}
