/**
 * `nanobot agent -m TEXT`: one turn in a session through the AgentLoop (so slash commands,
 * workspace context and memory apply), the reply on stdout. Streams text as it arrives on a
 * terminal; `--json` prints one object (CONTRACT.md). Exit 1 when the turn failed. Without
 * `-m`, a piped stdin is the message (see agent-input.ts); a terminal gets the interactive chat.
 */
import type { Command } from "commander";
import type { TurnReply } from "../../agent/turn-processor.js";
import { createLogger } from "../../core/logger.js";
import { logsDir, sandboxProbeCacheFile } from "../../config/paths.js";
import type { AgentEvent } from "../../core/events.js";
import { DEFAULT_CLI_SESSION_KEY } from "../../session/keys.js";
import type { CliContext } from "../context.js";
import { agentInputError, messageFromStdin, readStdinMessage, usageError } from "./agent-input.js";
import { retryLine } from "../retry-line.js";
import { startCommandTracing } from "../command-tracing.js";
import { probeBwrap } from "../../tools/builtin/sandbox-bwrap.js";

interface AgentOptions {
  message?: string;
  session: string;
  agent?: string;
  json?: boolean;
  stream: boolean;
  logs?: boolean;
}

/** The `--json` shape from CONTRACT.md. */
export interface AgentJsonOutput {
  content: string;
  sessionKey: string;
  stopReason: string;
  toolsUsed: string[];
  usage: { promptTokens: number; completionTokens: number };
  /** Only on a failed turn: whose failure (`provider`, `config`, `internal`) and why. */
  error?: { kind: string; message: string };
}

export function registerAgentCommand(program: Command, ctx: CliContext): void {
  program
    .command("agent")
    .description("talk to the agent: one turn with -m, interactive otherwise")
    .option("-m, --message <text>", "the message to send (one turn, then exit)")
    .option("-s, --session <key>", "session key", DEFAULT_CLI_SESSION_KEY)
    .option("-a, --agent <name>", "which agent answers (default: the default agent)")
    .option("--json", "print one JSON object with the reply, stop reason, tools used and usage")
    .option("--no-stream", "print the reply only when it is complete")
    .option("--logs", "print runtime logs to stderr")
    .action(async (opts: AgentOptions, command: Command) => {
      const inputError = agentInputError(opts);
      if (inputError !== undefined) return usageError(ctx, inputError);
      if (messageFromStdin(opts, ctx.io.stdin)) {
        opts.message = await readStdinMessage(ctx.io.stdin);
        if (opts.message === "") return usageError(ctx, "nothing to send: stdin was empty (pipe a message, or use -m)");
      }
      // Loaded here, not at the top, so `nanobot --help` and other commands start without them;
      // started before the config is read so the two overlap.
      const modules = Promise.all([import("../../agent/runtime.js"), import("../../agent/agent-loop.js"), import("../../cluster/turn-publisher.js")]);
      modules.catch(() => undefined);
      const loaded = await ctx.loadConfig(command);
      ctx.printWarnings(loaded.warnings);
      // The exec tool's description says whether it is sandboxed: probe bwrap while modules load.
      const exec = loaded.config.tools.exec;
      // A verdict an earlier start saved is used while it holds (sandbox-probe-cache.ts).
      const sandboxProbe = exec.enable && exec.sandbox !== "none" ? probeBwrap(ctx.io.env.PATH, { cacheFile: sandboxProbeCacheFile(loaded.home) }) : undefined;
      const logger = createLogger({ level: opts.logs ? "debug" : "warn", file: opts.logs ? undefined : `${logsDir(loaded.home)}/nanobot.log` });
      const [{ Runtime }, { AgentLoop }, { publishTurns }] = await modules;
      const runtime = new Runtime({ config: loaded.config, home: loaded.home, ...(loaded.path ? { configPath: loaded.path } : {}), env: ctx.io.env, logger });
      const tracing = await startCommandTracing(ctx.io.env, (message) => ctx.printWarnings([message]));
      // No provider configured: a local model server (Ollama) that answers is used.
      await runtime.detectLocalProvider();
      await sandboxProbe;
      if (opts.message === undefined) {
        const { runInteractive } = await import("../interactive/index.js");
        const interactiveLoop = new AgentLoop({ runtime });
        // On a shared PostgreSQL store, the gateways' event clients see these turns too.
        const publisher = publishTurns(runtime.store(), interactiveLoop.observers);
        try {
          await tracing.underCaller(() => runInteractive(ctx, { runtime, processor: interactiveLoop, sessionKey: opts.session, agent: opts.agent }));
        } finally {
          await interactiveLoop.stop();
          await publisher?.close();
          await runtime.close();
          await tracing.handle.shutdown();
        }
        return;
      }
      const loop = new AgentLoop({ runtime });
      const publisher = publishTurns(runtime.store(), loop.observers);
      const abort = new AbortController();
      const onSigint = (): void => abort.abort();
      process.once("SIGINT", onSigint);
      try {
        const profile = await runtime.resolveAgent(opts.agent);
        for (const ref of profile.unresolvedTools) ctx.printWarnings([`tool reference "${ref}" matched no MCP tool`]);
        for (const f of runtime.mcpStartFailures()) ctx.printWarnings([`MCP server ${f.server} failed to start: ${f.reason}`]);
        const live = !opts.json && opts.stream && ctx.io.stdout.isTTY === true;
        let streamed = false;
        const onEvent = (event: AgentEvent): void => {
          if (live && event.type === "text_delta") {
            ctx.io.stdout.write(event.delta);
            streamed = true;
          } else if (event.type === "tool_call" && ctx.io.stderr.isTTY) {
            ctx.io.stderr.write(ctx.colors.err.dim(`· ${event.toolCall.name}\n`));
          } else if (event.type === "retry_wait") {
            // Always (stderr only): otherwise an unreachable model is seconds of silence.
            ctx.io.stderr.write(ctx.colors.err.dim(`${retryLine(event)}\n`));
          }
        };
        const message = opts.message;
        const reply = await tracing.underCaller(() =>
          loop.process({ sessionKey: opts.session, content: message, channel: "cli", ...(opts.agent ? { agent: opts.agent } : {}) }, { signal: abort.signal, onEvent }),
        );
        report(ctx, opts, reply, streamed);
      } finally {
        process.off("SIGINT", onSigint);
        await loop.stop();
        await publisher?.close();
        await runtime.close();
        await tracing.handle.shutdown();
      }
    });
}

function report(ctx: CliContext, opts: AgentOptions, result: TurnReply, streamed: boolean): void {
  if (opts.json) {
    const out: AgentJsonOutput = {
      content: result.content,
      sessionKey: result.sessionKey,
      stopReason: result.stopReason,
      toolsUsed: result.toolsUsed,
      usage: { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens },
      ...(result.stopReason === "error" ? { error: { kind: result.errorKind ?? "provider", message: result.error ?? "the turn failed" } } : {}),
    };
    ctx.io.stdout.write(`${JSON.stringify(out)}\n`);
  } else if (streamed) {
    ctx.io.stdout.write("\n");
  } else if (result.content) {
    ctx.io.stdout.write(`${result.content}\n`);
  }
  for (const warning of result.warnings ?? []) ctx.io.stderr.write(`${ctx.colors.err.yellow("note:")} ${warning}\n`);
  if (result.stopReason === "error") {
    ctx.io.stderr.write(`${ctx.colors.err.red("error:")} ${(result.error ?? "the turn failed").split("\n")[0]}\n`);
    ctx.exitCode = 1;
  } else if (result.stopReason === "aborted") {
    ctx.io.stderr.write("stopped\n");
    ctx.exitCode = 1;
  } else if (result.stopReason !== "completed" && !opts.json) {
    ctx.io.stderr.write(`${ctx.colors.err.yellow("note:")} the turn ended with ${result.stopReason}\n`);
  }
}
