/**
 * `nanobot serve-mcp`: nanobot as an MCP server on stdio, one `chat-with-<agent>` tool per
 * published agent. stdout belongs to JSON-RPC: logs go to `<home>/logs/nanobot.log` (or stderr
 * with `--logs`), warnings to stderr. Runs until the client closes stdin or a signal arrives.
 */
import type { Command } from "commander";
import type { AgentLoop } from "../../agent/agent-loop.js";
import type { Runtime } from "../../agent/runtime.js";
import type { TurnProcessor } from "../../agent/turn-processor.js";
import { logsDir } from "../../config/paths.js";
import { createLogger } from "../../core/logger.js";
import { startCommandTracing } from "../command-tracing.js";
import type { CliContext } from "../context.js";

export interface ServeMcpCommandOptions {
  /** How turns run (default: an AgentLoop, so locks, commands and memory apply). */
  processorFor?: (runtime: Runtime) => TurnProcessor;
}

interface ServeMcpOptions {
  logs?: boolean;
}

export function registerServeMcpCommand(program: Command, ctx: CliContext, options: ServeMcpCommandOptions = {}): void {
  program
    .command("serve-mcp")
    .description("serve the published agents as an MCP server on stdio (chat-with-<agent> tools)")
    .option("--logs", "write runtime logs to stderr instead of the log file")
    .action(async (opts: ServeMcpOptions, command: Command) => {
      const loaded = await ctx.loadConfig(command);
      ctx.printWarnings(loaded.warnings);
      const logger = createLogger({
        level: opts.logs ? "debug" : "info",
        ...(opts.logs ? { destination: process.stderr } : { file: `${logsDir(loaded.home)}/nanobot.log` }),
      });
      const [{ Runtime }, { AgentLoop }, { serveMcpStdio }, { publishTurns }] = await Promise.all([
        import("../../agent/runtime.js"),
        import("../../agent/agent-loop.js"),
        import("../../gateway/mcp/stdio.js"),
        import("../../cluster/turn-publisher.js"),
      ]);
      const runtime = new Runtime({ config: loaded.config, home: loaded.home, ...(loaded.path ? { configPath: loaded.path } : {}), env: ctx.io.env, logger });
      const tracing = await startCommandTracing(ctx.io.env, (message) => logger.warn(message));
      // No provider configured: a local model server (Ollama) that answers is used.
      await runtime.detectLocalProvider();
      const loop = options.processorFor ? undefined : new AgentLoop({ runtime });
      const processor = options.processorFor?.(runtime) ?? (loop as AgentLoop);
      // On a shared PostgreSQL store, the gateways' event clients see these turns too.
      const publisher = loop ? publishTurns(runtime.store(), loop.observers) : undefined;
      const handle = await serveMcpStdio({
        processor,
        config: loaded.config,
        loadMessages: (sessionKey) => runtime.store().loadMessages(sessionKey),
        version: ctx.version,
        // publish.introduction and the re-exported MCP tools, prompts and resources.
        source: runtime,
        log: (level, msg, data) => logger[level](msg, data),
      });
      const stop = (): void => {
        handle.close().catch((err: unknown) => logger.error("closing the MCP server failed", { error: String(err) }));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      logger.info("serving MCP on stdio");
      try {
        await handle.closed;
      } finally {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        await loop?.stop();
        await publisher?.close();
        await runtime.close();
        await tracing.handle.shutdown();
      }
    });
}
