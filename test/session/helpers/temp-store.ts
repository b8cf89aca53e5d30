/** Temp-dir SQLite stores and engine-shaped messages for the session tests. */
import { mkdtemp, rm } from "node:fs/promises";
import { afterEach, beforeEach } from "vitest";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assistantMessage, toolMessage, userMessage } from "../../../src/core/index.js";
import type { AssistantMessage, Message, RunResult, ToolCallPart, ToolMessage } from "../../../src/core/index.js";
import { SqliteSessionStore } from "../../../src/session/index.js";

export interface TempStores {
  dir: string;
  open(name?: string): SqliteSessionStore;
  cleanup(): Promise<void>;
}

export async function tempStores(): Promise<TempStores> {
  const dir = await mkdtemp(join(tmpdir(), "nanobot-session-"));
  const opened: SqliteSessionStore[] = [];
  return {
    dir,
    open(name = "state.db") {
      const store = new SqliteSessionStore({ path: join(dir, name) });
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened) await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface StoreFixture {
  stores: TempStores;
  /** `stores.open()`: the test's default store. */
  store: SqliteSessionStore;
}

/**
 * Registers the file's beforeEach/afterEach: a fresh temp dir and an open store for every test,
 * handed to `use` (e.g. `storePerTest((fx) => ({ stores, store } = fx))`), cleaned up after it.
 */
export function storePerTest(use: (fixture: StoreFixture) => void): void {
  let current: TempStores | undefined;
  beforeEach(async () => {
    current = await tempStores();
    use({ stores: current, store: current.open() });
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

export function call(id: string, name: string, args: Record<string, unknown> = {}): ToolCallPart {
  return { type: "toolCall", id, name, arguments: args, rawArguments: JSON.stringify(args) };
}

export function callingAssistant(text: string, ...calls: ToolCallPart[]): AssistantMessage {
  return assistantMessage(text, calls);
}

export function result(callId: string, name: string, text: string): ToolMessage {
  return toolMessage(callId, name, text);
}

export function runResult(newMessages: Message[], overrides: Partial<RunResult> = {}): RunResult {
  const last = newMessages.at(-1);
  const content = last?.role === "assistant" ? last.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("") : "";
  return {
    content,
    newMessages,
    toolsUsed: [],
    usage: { promptTokens: 10, completionTokens: 5 },
    stopReason: "completed",
    iterations: 1,
    ...overrides,
  };
}

/** A completed plain exchange: user → assistant. */
export async function plainTurn(store: SqliteSessionStore, key: string, ask: string, answer: string): Promise<void> {
  const turn = await store.beginTurn(key, userMessage(ask));
  await store.completeTurn(turn.turnId, runResult([assistantMessage(answer)]));
}

/** role:text summary of a history, for readable assertions. */
export function shape(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    const text = m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
    if (m.role === "tool") return `tool(${m.toolCallId}):${text}`;
    const calls = m.content.filter((p) => p.type === "toolCall").map((p) => (p as ToolCallPart).id);
    return calls.length ? `${m.role}:${text}[${calls.join(",")}]` : `${m.role}:${text}`;
  });
}
