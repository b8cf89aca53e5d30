/**
 * Issue 21, items 6 and 10 in the interactive chat, in a real terminal (tmux): a spinner
 * with `thinking…` until the first token, an MCP server that cannot start named before the
 * first prompt. (`/history` headed by the title: test/cli/titles.test.ts; this launcher runs
 * turns without the AgentLoop, which owns slash commands.)
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TurnOutput } from "../../src/cli/interactive/turn-output.js";
import type { Colors } from "../../src/cli/io.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startTmuxRepl } from "./helpers/tmux-repl.js";
import type { TmuxRepl } from "./helpers/tmux-repl.js";
import { needs } from "../support/requires.js";

const terminal = needs.tmux();

let repl: TmuxRepl | undefined;
let fake: FakeLLM | undefined;

afterEach(async () => {
  await repl?.close();
  await fake?.close();
  repl = undefined;
  fake = undefined;
});

const screen = (): string => repl?.tmux("capture-pane", "-p", "-t", "nb") ?? "";

async function until(check: (text: string) => boolean, what: string): Promise<string> {
  const start = Date.now();
  for (;;) {
    const text = screen();
    if (check(text)) return text;
    if (Date.now() - start > 20_000) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function start(extra: Record<string, unknown> = {}): Promise<TmuxRepl> {
  fake = await startFakeLLM();
  const baseURL = fake.openaiBaseURL;
  repl = await startTmuxRepl({
    sessionKey: "cli:polish",
    cols: 100,
    rows: 30,
    config: (dir) => ({
      providers: { custom: { apiBase: baseURL, apiKey: "sk-fake-polish-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(dir, "ws") } },
      ...extra,
    }),
  });
  return repl;
}

terminal.describe("nanobot agent (interactive): waiting and failures are shown", () => {
  it("shows a thinking… spinner until the first token, then only the answer", async () => {
    const r = await start();
    await until((s) => s.includes("you ›"), "the prompt");
    fake?.enqueue({ text: "Tulips first, then roses.", delayMs: 2_000 });
    r.tmux("send-keys", "-t", "nb", "Plan the garden for spring", "Enter");
    const waiting = await until((s) => s.includes("thinking…"), "the spinner");
    expect(waiting).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking…/);
    const answered = await until((s) => s.includes("Tulips first, then roses.") && (s.match(/you ›/g) ?? []).length >= 2, "the answer");
    expect(answered).not.toContain("thinking…");

  }, 60_000);

  it("names an MCP server that failed to start, with its cause, before the first prompt", async () => {
    const broken = { command: process.execPath, args: ["-e", "console.error('boom: GITHUB_TOKEN is not set'); process.exit(3)"] };
    await start({ mcpServers: { github: broken } });
    const shown = await until((s) => s.includes("you ›"), "the prompt");
    expect(shown.replace(/\n/g, "")).toMatch(/warning: MCP server github failed to start: .*GITHUB_TOKEN is not set/);
  }, 60_000);
});

describe("the waiting spinner (TurnOutput on a terminal)", () => {
  const plain = new Proxy({}, { get: () => (text: string) => text }) as Colors;

  it("stays through hidden reasoning and clears at the first text; a pipe gets no spinner", () => {
    const written: string[] = [];
    const view = new TurnOutput({ write: (t: string) => written.push(t), isTTY: true, columns: 80, rows: 24 }, plain, () => false);
    view.startWaiting();
    expect(written.join("")).toContain("thinking…");
    written.length = 0;
    view.onEvent({ type: "reasoning_delta", delta: "hmm" });
    expect(written).toEqual([]);
    view.onEvent({ type: "text_delta", delta: "Hello" });
    expect(written).toEqual(["\r\x1b[K", "Hello"]);
    view.dispose();

    const piped: string[] = [];
    const quiet = new TurnOutput({ write: (t: string) => piped.push(t) }, plain, () => true);
    quiet.startWaiting();
    quiet.onEvent({ type: "text_delta", delta: "Hi" });
    expect(piped).toEqual(["Hi"]);
  });
});
