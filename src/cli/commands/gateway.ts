/**
 * `nanobot gateway [--host H] [--port P]`: the HTTP gateway (OpenAI-compatible API + web UI).
 * Prints `listening on http://H:P` when ready; SIGINT/SIGTERM stop running turns (saved as
 * stopped), close the server and exit 0.
 */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { logsDir, sandboxProbeCacheFile } from "../../config/paths.js";
import { createLogger } from "../../core/logger.js";
import { describeSandbox, resolveSandbox } from "../../tools/builtin/sandbox-mode.js";
import { scrubSecretText } from "../../core/scrub.js";
import { printWarningsRefusingUnknownChannels } from "../channel-check.js";
import type { CliContext } from "../context.js";
import { processSignal } from "../stop-signal.js";
import type { StopSignal } from "../stop-signal.js";

interface GatewayOptions {
  host?: string;
  port?: number;
  logs?: boolean;
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("expected a port number (0-65535)");
  return n;
}

export function registerGatewayCommand(program: Command, ctx: CliContext, waitForStop: StopSignal = processSignal): void {
  program
    .command("gateway")
    .description("run the assistant: HTTP gateway (OpenAI-compatible API, web UI, /mcp), channels and cron")
    .option("--host <host>", "interface to bind (default: gateway.host, 127.0.0.1)")
    .option("--port <port>", "port to listen on (default: gateway.port, 18790)", parsePort)
    .option("--logs", "print runtime logs to stderr")
    .action(async (opts: GatewayOptions, command: Command) => {
      const loaded = await ctx.loadConfig(command);
      // A channel it cannot start stops the gateway before it listens, as `config check` does.
      printWarningsRefusingUnknownChannels(ctx, loaded);
      const logger = createLogger({ level: opts.logs ? "debug" : "info", file: opts.logs ? undefined : `${logsDir(loaded.home)}/gateway.log` });
      const [{ Runtime }, { startAssistantGateway }] = await Promise.all([
        import("../../agent/runtime.js"),
        import("../../gateway/assistant-gateway.js"),
      ]);
      const runtime = new Runtime({ config: loaded.config, home: loaded.home, ...(loaded.path ? { configPath: loaded.path } : {}), env: ctx.io.env, logger });
      const exec = loaded.config.tools.exec;
      const sandbox = resolveSandbox({
        setting: exec.sandbox,
        restrictToWorkspace: loaded.config.tools.restrictToWorkspace,
        ...(ctx.io.env.PATH ? { pathVar: ctx.io.env.PATH } : {}),
        cacheFile: sandboxProbeCacheFile(loaded.home),
      });
      if (exec.enable && sandbox.kind === "none") ctx.io.stderr.write(`${ctx.colors.err.yellow("warning:")} exec has no sandbox: ${describeSandbox(sandbox)}\n`);
      // No provider configured: a local model server (Ollama) that answers is used.
      await runtime.detectLocalProvider();
      // Subscribe before listening so a signal that arrives right after the line is not lost.
      const stopped = waitForStop();
      let running;
      try {
        running = await startAssistantGateway(runtime, { host: opts.host, port: opts.port });
      } catch (err) {
        await runtime.close();
        throw err;
      }
      const { gateway } = running;
      if (gateway.setupHelp) ctx.io.stderr.write(`${ctx.colors.err.yellow("note:")} ${gateway.setupHelp}\n`);
      for (const r of running.channelResults) {
        if (!r.ok) ctx.io.stderr.write(`${ctx.colors.err.yellow("warning:")} channel ${r.name} failed to start: ${scrubSecretText(r.error ?? "unknown error")}\n`);
      }
      for (const note of gateway.notices()) {
        ctx.io.stderr.write(`${ctx.colors.err.yellow("warning:")} ${note}\n`);
        logger.warn(note);
      }
      const { allowedHosts, allowedOrigins } = loaded.config.gateway;
      if (allowedHosts.length > 0 || allowedOrigins.length > 0) {
        // Say what the allowlist admits, so a name that is refused (403) is easy to explain.
        const listed = [...allowedHosts.map((h) => `Host ${h}`), ...allowedOrigins.map((o) => `Origin ${o}`)].join(", ");
        ctx.io.stderr.write(`${ctx.colors.err.yellow("note:")} browsers may also use ${listed} (gateway.allowedHosts / gateway.allowedOrigins)\n`);
      }
      ctx.io.stdout.write(`listening on ${gateway.server.url}\n`);
      // MCP servers connect in the background (a slow one must not hold the port closed); the
      // ones that fail are named here and in the log (Runtime.mcp) and the web UI's notice bar.
      void runtime.startMcp().then(
        (failures) => {
          for (const f of failures) ctx.io.stderr.write(`${ctx.colors.err.yellow("warning:")} MCP server ${f.server} failed to start: ${f.reason}\n`);
        },
        (err: unknown) => logger.error("MCP servers could not be started", { error: String(err) }),
      );
      logger.info("gateway listening", { url: gateway.server.url, channels: running.channelResults.filter((r) => r.ok).map((r) => r.name) });
      const signal = await stopped;
      ctx.io.stderr.write(`${signal}: stopping running turns and closing\n`);
      await running.close();
      ctx.exitCode = 0;
    });
}
