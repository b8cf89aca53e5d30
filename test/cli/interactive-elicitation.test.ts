/**
 * `nanobot agent` (interactive) under tmux, with the real everything MCP server: the model calls
 * its `trigger-elicitation-request`, the REPL shows the server's question and asks each field
 * on the terminal; the typed answer reaches the server and comes back in the tool result.
 */
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { referenceSpec } from "../mcp/helpers.js";
import { startTmuxRepl } from "./helpers/tmux-repl.js";
import type { TmuxRepl } from "./helpers/tmux-repl.js";
import { needs } from "../support/requires.js";

const terminal = needs.tmux();

/** The everything server's form, in order: each prompt's label and what the user types. */
const FORM_ANSWERS: [label: string, typed: string][] = [
  ["String*", "Ada Lovelace"],
  ["Boolean", "y"],
  ["String with default", ""],
  ["String with email format", "ada@example.com"],
  ["String with uri format", ""],
  ["String with date format", ""],
  ["Integer", "500"], // out of range: asked again
  ["Integer", "7"],
  ["Number in range 1-1000", ""],
  ["Untitled Single Select Enum", "2"],
  ["Untitled Multiple Select Enum", ""],
  ["Titled Single Select Enum", ""],
  ["Titled Multiple Select Enum", ""],
  ["Legacy Titled Single Select Enum", ""],
];

let repl: TmuxRepl;
let fake: FakeLLM;

const tmux = (...args: string[]): string => repl.tmux(...args);
const screen = (): string => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "nb");
const lines = (): string[] => screen().trimEnd().split("\n");
const lastLine = (): string => lines().at(-1) ?? "";
const lineCount = (): number => lines().length;

async function until(check: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > 20_000) throw new Error(`timed out waiting for ${what}; screen:\n${screen()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeEach(async () => {
  if (!terminal.available) return;
  fake = await startFakeLLM();
  repl = await startTmuxRepl({
    sessionKey: "cli:elicit",
    cols: 120,
    rows: 40,
    env: ["NO_COLOR=1"],
    config: (dir) => ({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-repl-0002" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(dir, "ws") } },
      mcpServers: { everything: referenceSpec("everything") },
    }),
  });
});
afterEach(async () => {
  await repl?.close();
  await fake?.close();
});

terminal.describe("MCP elicitation in the interactive CLI (tmux)", () => {
  it("asks the server's form on the terminal and the answer reaches the server", async () => {
    await until(() => screen().includes("you ›"), "the prompt");
    fake.enqueue({ toolCalls: [{ id: "call_form", name: "mcp_everything_trigger-elicitation-request", arguments: {} }] }, { text: "Thanks, Ada." });
    tmux("send-keys", "-t", "nb", "please fill the form", "Enter");
    await until(() => screen().includes("everything asks: Please provide inputs"), "the question");
    await until(() => lastLine().includes("answer?"), "accept / decline / cancel");
    // Counted before the keys go out: the next prompt may be on screen before we look again.
    let linesBefore = lineCount();
    tmux("send-keys", "-t", "nb", "a", "Enter");
    for (const [label, typed] of FORM_ANSWERS) {
      // Each answer is typed only once its (new) prompt is on the last line, as a person would.
      await until(() => lineCount() > linesBefore && lastLine().trimStart().startsWith(label), `the prompt for ${label}`);
      linesBefore = lineCount();
      if (typed) tmux("send-keys", "-t", "nb", "-l", typed);
      tmux("send-keys", "-t", "nb", "Enter");
    }
    await until(() => screen().includes("Thanks, Ada."), "the final reply");
    const shown = screen();
    expect(shown).toContain("Integer must be at most 100");
    expect(shown).toContain("answer sent");
    const sent = JSON.stringify(fake.requests[1]?.body);
    expect(sent).toContain("- Name: Ada Lovelace");
    expect(sent).toContain("- Agreed to terms: true");
    expect(sent).toContain("- Email: ada@example.com");
    expect(sent).toContain("- Favorite Integer: 7");
    tmux("send-keys", "-t", "nb", "exit", "Enter");
    await until(() => screen().includes("[exited]"), "the exit");
  }, 90_000);
});
