/**
 * `nanobot agent` without `-m`: a readline chat. Lines ending in `\` continue, up/down walks the
 * history (kept in `$NANOBOT_HOME/cli_history`), Tab completes `/` commands, Ctrl-C stops the
 * running turn (a second Ctrl-C, or one at an empty prompt twice, exits).
 */
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Interface } from "node:readline";
import type { Runtime } from "../../agent/runtime.js";
import { DirectTurnProcessor } from "../../agent/turn-processor.js";
import type { TurnProcessor } from "../../agent/turn-processor.js";
import { errorMessage } from "../../core/errors.js";
import type { CliContext } from "../context.js";
import { createCliAsker } from "./elicitation-prompt.js";
import { createBuiltinCommands } from "../../agent/commands/builtin.js";
import type { CommandRegistry } from "../../agent/commands/registry.js";
import { LOCAL_REGISTRY_COMMANDS, TERMINAL_COMMANDS, completeCommand, helpText } from "./slash-commands.js";
import { TurnOutput } from "./turn-output.js";
import type { TerminalOut } from "./turn-output.js";

export interface InteractiveOptions {
  /** The agent command's runtime (config, store); closed by the caller. */
  runtime: Runtime;
  /** Defaults to `DirectTurnProcessor(runtime)`; the AgentLoop once it exists. */
  processor?: TurnProcessor;
  sessionKey: string;
  agent?: string;
  /** Show reasoning (dimmed); default true. `/reasoning` toggles it. */
  showReasoning?: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream & TerminalOut;
  /** Where up/down history is kept; default `<home>/cli_history`. */
  historyFile?: string;
}

const HISTORY_SIZE = 500;
const EXIT_WORDS = new Set(["exit", "quit", "/exit", "/quit", ":q"]);

async function loadHistory(file: string): Promise<string[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  // readline wants newest first.
  return text.split("\n").filter(Boolean).slice(-HISTORY_SIZE).reverse();
}

export async function runInteractive(ctx: CliContext, options: InteractiveOptions): Promise<void> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const colors = ctx.colors.out;
  const processor = options.processor ?? new DirectTurnProcessor(options.runtime);
  // The loop's own registry when there is one, so /help lists exactly what it answers.
  const registry: CommandRegistry = (processor as { commands?: CommandRegistry }).commands ?? createBuiltinCommands();
  const historyFile = options.historyFile ?? join(options.runtime.home, "cli_history");
  let showReasoning = options.showReasoning ?? true;
  const rl: Interface = createInterface({
    input,
    output,
    terminal: (output as TerminalOut).isTTY === true,
    history: await loadHistory(historyFile),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    completer: (line: string) => completeCommand(line, registry),
  });
  const mainPrompt = colors.bold(colors.cyan("you › "));
  const print = (text: string): void => void output.write(text.endsWith("\n") ? text : `${text}\n`);

  print(colors.dim(`nanobot · session ${options.sessionKey}${options.agent ? ` · agent ${options.agent}` : ""} · /help for commands, Ctrl-C stops a turn`));
  // Servers are connected before the first prompt, so one that cannot start is named now, not
  // discovered later as a tool the model never gets.
  for (const f of await options.runtime.startMcp()) {
    ctx.io.stderr.write(`${ctx.colors.err.yellow("warning:")} MCP server ${f.server} failed to start: ${f.reason}\n`);
  }

  let pending: string[] = [];
  let turn: AbortController | undefined;
  let sigintArmed = false;

  const remember = (text: string): void => {
    void mkdir(dirname(historyFile), { recursive: true })
      .then(() => appendFile(historyFile, `${text.replace(/\n/g, " ")}\n`))
      .catch(() => undefined);
  };

  const runTurn = async (text: string): Promise<void> => {
    const controller = new AbortController();
    turn = controller;
    const view = new TurnOutput(output, colors, () => showReasoning);
    // An MCP server that asks the user during this turn asks here (see elicitation-prompt.ts).
    const unregister = options.runtime.elicitation.register(options.sessionKey, createCliAsker({ rl, print, colors, beforeAsk: () => view.suspend() }));
    view.startWaiting();
    try {
      const reply = await processor.process(
        { sessionKey: options.sessionKey, content: text, agent: options.agent, channel: "cli" },
        { signal: controller.signal, onEvent: (e) => view.onEvent(e) },
      );
      view.finish(reply.stopReason === "aborted" ? "" : reply.content);
      if (reply.stopReason === "aborted") print(colors.yellow("⏹ stopped"));
      else if (reply.error) print(`${colors.red("error:")} ${reply.error}`);
    } catch (err) {
      view.finish("");
      print(controller.signal.aborted ? colors.yellow("⏹ stopped") : `${colors.red("error:")} ${errorMessage(err).split("\n")[0]}`);
    } finally {
      unregister();
      view.dispose();
      turn = undefined;
    }
  };

  /** Local commands; returns false when the line should go to the agent. */
  const runLocal = async (line: string): Promise<boolean> => {
    const name = line.split(/\s+/)[0] ?? "";
    if (!LOCAL_REGISTRY_COMMANDS.includes(name) && !TERMINAL_COMMANDS.some((c) => c.name === name)) return false;
    if (name === "/help") print(helpText(registry));
    else if (name === "/clear") output.write("\x1b[2J\x1b[H");
    else if (name === "/reasoning") {
      showReasoning = !showReasoning;
      print(colors.dim(`reasoning ${showReasoning ? "shown" : "hidden"}`));
    } else if (name === "/new") {
      await options.runtime.store().newThread(options.sessionKey);
      print(colors.dim("new thread started; the previous one is archived"));
    }
    return true;
  };

  await new Promise<void>((resolve) => {
    let closed = false;
    const prompt = (): void => {
      if (closed) return;
      rl.setPrompt(pending.length > 0 ? colors.dim("  … ") : mainPrompt);
      rl.prompt();
    };
    rl.on("close", () => {
      closed = true;
      turn?.abort();
      resolve();
    });
    rl.on("SIGINT", () => {
      if (turn) {
        // First Ctrl-C stops the turn; a second one while it is still stopping leaves.
        if (turn.signal.aborted) return rl.close();
        turn.abort();
        return;
      }
      if (rl.line.length > 0 || pending.length > 0) {
        pending = [];
        output.write("\n");
        sigintArmed = false;
        return prompt();
      }
      if (sigintArmed) return rl.close();
      sigintArmed = true;
      output.write(`\n${colors.dim("(Ctrl-C again, or exit, to leave)")}\n`);
      prompt();
    });
    rl.on("line", (line) => {
      sigintArmed = false;
      if (turn) return; // typed while a turn runs: ignored (the turn's output owns the screen)
      if (line.endsWith("\\")) {
        pending.push(line.slice(0, -1));
        return prompt();
      }
      const text = [...pending, line].join("\n").trim();
      pending = [];
      if (text === "") return prompt();
      if (EXIT_WORDS.has(text)) return rl.close();
      remember(text);
      void (async () => {
        try {
          if (!(await runLocal(text))) await runTurn(text);
        } catch (err) {
          print(`${colors.red("error:")} ${errorMessage(err).split("\n")[0]}`);
        }
        prompt();
      })();
    });
    prompt();
  });
  ctx.exitCode = 0;
}
