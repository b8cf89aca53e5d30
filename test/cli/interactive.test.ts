import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinCommands } from "../../src/agent/commands/builtin.js";
import { commandNames, completeCommand } from "../../src/cli/interactive/slash-commands.js";
import { toolLine } from "../../src/cli/interactive/turn-output.js";
import { rowsOf } from "../../src/cli/interactive/terminal-markdown.js";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startTmuxRepl } from "./helpers/tmux-repl.js";
import type { TmuxRepl } from "./helpers/tmux-repl.js";
import { needs } from "../support/requires.js";

const terminal = needs.tmux();

let repl: TmuxRepl;
let root: string;
let fake: FakeLLM;

const tmux = (...args: string[]): string => repl.tmux(...args);
const screen = (): string => tmux("capture-pane", "-p", "-t", "nb");

async function until(check: (text: string) => boolean, what: string): Promise<string> {
  const start = Date.now();
  for (;;) {
    const text = screen();
    if (check(text)) return text;
    if (Date.now() - start > 15_000) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeEach(async () => {
  if (!terminal.available) return;
  fake = await startFakeLLM();
  repl = await startTmuxRepl({
    sessionKey: "cli:tmux",
    cols: 100,
    rows: 30,
    config: (dir) => ({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-repl-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(dir, "ws") } },
    }),
  });
  root = repl.root;
});
afterEach(async () => {
  await repl?.close();
  await fake?.close();
});

terminal.describe("nanobot agent (interactive) under tmux", () => {
  it("streams a reply, renders its markdown, shows the tool line, and exits on `exit`", async () => {
    await until((s) => s.includes("you ›"), "the prompt");
    fake.enqueue(
      { toolCalls: [{ name: "exec", arguments: { command: "echo hi" } }] },
      { text: "The command printed **hi** for you.", chunkDelayMs: 20 },
    );
    tmux("send-keys", "-t", "nb", "run echo hi", "Enter");
    const shown = await until((s) => s.includes("printed hi for you") && (s.match(/you ›/g) ?? []).length >= 2, "the rendered reply");
    expect(shown).toContain("✓ exec: echo hi");
    expect(shown).not.toContain("**hi**");
    tmux("send-keys", "-t", "nb", "exit", "Enter");
    await until((s) => s.includes("[exited]"), "the exit");
  });

  it("/help lists the agent's command registry, then the terminal's own commands", async () => {
    await until((s) => s.includes("you ›"), "the prompt");
    tmux("send-keys", "-t", "nb", "/help", "Enter");
    const text = await until((s) => s.includes("In this terminal:"), "the help");
    const registry = createBuiltinCommands();
    for (const line of registry.helpLines()) expect(text).toContain(line.slice(0, 60));
    expect(text).toContain("/reasoning");
    expect(text).not.toContain("/threads");
    expect(fake.requests).toHaveLength(0);
  });

  it("Ctrl-C stops a slow turn (saved as stopped) and the chat goes on", async () => {
    await until((s) => s.includes("you ›"), "the prompt");
    fake.enqueue({ text: "never", delayMs: 60_000 }, { text: "still here" });
    tmux("send-keys", "-t", "nb", "slow please", "Enter");
    const start = Date.now();
    while (fake.requests.length < 1 && Date.now() - start < 15_000) await new Promise((r) => setTimeout(r, 20));
    tmux("send-keys", "-t", "nb", "C-c");
    await until((s) => s.includes("⏹ stopped"), "the stopped marker");
    tmux("send-keys", "-t", "nb", "are you there?", "Enter");
    await until((s) => s.includes("still here"), "the next reply");
    tmux("send-keys", "-t", "nb", "C-d");
    await until((s) => s.includes("[exited]"), "the exit");
    const store = new SqliteSessionStore({ path: join(root, "home", "state.db") });
    const rows = await store.snapshot((q) => q.db.prepare("SELECT status FROM turns ORDER BY started_at").all());
    await store.close();
    expect(rows).toEqual([{ status: "stopped" }, { status: "completed" }]);
  });
});

describe("interactive helpers", () => {
  it("completes / commands", () => {
    expect(completeCommand("/he")).toEqual([["/help"], "/he"]);
    expect(completeCommand("/q")[0]).toEqual(["/quit"]);
    expect(completeCommand("hello")).toEqual([[], "hello"]);
    // Completion offers what /help lists: the registry's names and the terminal's own.
    expect(completeCommand("/")[0]).toEqual(commandNames());
    expect(completeCommand("/mo")[0]).toEqual(["/model"]);
  });

  it("shows a tool by its telling argument, shortened", () => {
    expect(toolLine({ name: "exec", arguments: { command: "npm   test" } })).toBe("exec: npm test");
    expect(toolLine({ name: "read_file", arguments: { path: "a.txt", limit: 3 } })).toBe("read_file: a.txt");
    expect(toolLine({ name: "exec", arguments: { command: "x".repeat(100) } }, 20)).toHaveLength(20);
  });

  it("counts wrapped terminal rows ignoring colour codes", () => {
    expect(rowsOf("abc", 80)).toBe(1);
    expect(rowsOf("a".repeat(81), 80)).toBe(2);
    expect(rowsOf("\x1b[1mhi\x1b[0m\nthere", 80)).toBe(2);
  });
});
