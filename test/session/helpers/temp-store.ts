/**
 * Throwaway stores for the session tests, of either kind: SQLite files in a temp dir, or
 * PostgreSQL schemas (one per store name) on the test database. `describeEachStore` runs a
 * suite once per kind, so both stores answer to the same tests.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { afterEach, beforeEach, describe } from "vitest";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assistantMessage, toolMessage, userMessage } from "../../../src/core/index.js";
import type { AssistantMessage, Message, RunResult, ToolCallPart, ToolMessage } from "../../../src/core/index.js";
import { PgSessionStore, SqliteSessionStore } from "../../../src/session/index.js";
import type { PortableSessionStore, SessionStore } from "../../../src/session/index.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../../support/postgres.js";

export type StoreKind = "sqlite" | "postgres";

/** Where a store lives, as a child process can be told (JSON on its command line). */
export type StoreSpec = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema: string };

/** `options`: what both stores take beside their location. */
export function openSpec(spec: StoreSpec, options: { historyCacheBytes?: number } = {}): PortableSessionStore {
  return spec.kind === "sqlite" ? new SqliteSessionStore({ path: spec.path, ...options }) : new PgSessionStore({ url: spec.url, schema: spec.schema, ...options });
}

/** `S`: SQLite by default (most helpers’ users); suites over both kinds use `TempStores<PortableSessionStore>`. */
export interface TempStores<S extends PortableSessionStore = SqliteSessionStore> {
  kind: StoreKind;
  dir: string;
  /** Where the store called `name` lives (the same name is the same database). */
  spec(name?: string): StoreSpec;
  /** A new instance on `name` (another process's view of the same data). */
  open(name?: string): S;
  cleanup(): Promise<void>;
}

/** SQLite stores (the default), typed as such for tests of SQLite-only parts. */
export async function tempStores(): Promise<TempStores<SqliteSessionStore>>;
export async function tempStores(kind: StoreKind): Promise<TempStores<PortableSessionStore>>;
export async function tempStores(kind: StoreKind = "sqlite"): Promise<TempStores<PortableSessionStore>> {
  const dir = await mkdtemp(join(tmpdir(), "nanobot-session-"));
  const opened: PortableSessionStore[] = [];
  const base = uniqueSchema();
  const schemas = new Set<string>();
  const spec = (name = "state.db"): StoreSpec => {
    if (kind === "sqlite") return { kind, path: join(dir, name) };
    const schema = `${base}_${name.replace(/[^a-z0-9]/gi, "").toLowerCase()}`;
    schemas.add(schema);
    return { kind, url: TEST_PG_URL, schema };
  };
  return {
    kind,
    dir,
    spec,
    open(name) {
      const store = openSpec(spec(name));
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened) await store.close();
      await dropSchemas([...schemas]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface StoreFixture<S extends PortableSessionStore = SqliteSessionStore> {
  stores: TempStores<S>;
  /** `stores.open()`: the test's default store. */
  store: S;
}

/**
 * Registers the file's beforeEach/afterEach: fresh stores of `kind` and an open store for
 * every test, handed to `use` (e.g. `storePerTest((fx) => ({ stores, store } = fx), kind)`).
 */
export function storePerTest(use: (fixture: StoreFixture) => void): void;
export function storePerTest(use: (fixture: StoreFixture<PortableSessionStore>) => void, kind: StoreKind): void;
export function storePerTest(
  use: ((fixture: StoreFixture) => void) | ((fixture: StoreFixture<PortableSessionStore>) => void),
  kind: StoreKind = "sqlite",
): void {
  let current: TempStores<PortableSessionStore> | undefined;
  beforeEach(async () => {
    current = await tempStores(kind);
    // The overloads pair a SQLite callback with the SQLite default only.
    (use as (fixture: StoreFixture<PortableSessionStore>) => void)({ stores: current, store: current.open() });
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

/**
 * The suite `body` once on SQLite and once on PostgreSQL. Without a reachable PostgreSQL the
 * second run skips with one line saying how to start it (and fails under CI=true).
 */
export async function describeEachStore(title: string, body: (kind: StoreKind) => void): Promise<void> {
  describe(`${title} [sqlite]`, () => body("sqlite"));
  (await needsPostgres()).describe(`${title} [postgres]`, () => body("postgres"));
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
export async function plainTurn(store: SessionStore, key: string, ask: string, answer: string): Promise<void> {
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
