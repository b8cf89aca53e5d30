/**
 * Replayed histories come from the store's parsed-message cache (SQLite and PostgreSQL): the same
 * (frozen) objects turn after turn, and still exactly what the rows say after rollbacks,
 * deletions, thread switches, consolidation, another process's writes, histories longer than
 * one page, and whatever first read the caller's `expectedMessages` asks for.
 */
import { describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import type { Message } from "../../src/core/index.js";
import { ParsedMessages } from "../../src/session/parsed-messages.js";
import { rowToMessage } from "../../src/session/rows.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { describeEachStore, openSpec, plainTurn, shape, storePerTest } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";

const KEY = "api:cache";
const tenEach = (_m: Message): number => 10;

await describeEachStore("loadHistory's parsed-message cache", (kind) => {
  let stores: TempStores<PortableSessionStore>;
  let store: PortableSessionStore;
  storePerTest((fx) => ({ stores, store } = fx), kind);

  /** The history as a fresh store (no cache) reads it: the reference every cached read must equal. */
  async function uncached(options: { tokenBudget?: number } = {}): Promise<Message[]> {
    const fresh = stores.open();
    return fresh.loadHistory(KEY, options.tokenBudget === undefined ? {} : { tokenBudget: options.tokenBudget, estimate: tenEach });
  }

  it("returns the same frozen objects on the next turn and parses only the new rows", async () => {
    await plainTurn(store, KEY, "one", "1");
    const first = await store.loadHistory(KEY, { tokenBudget: 1000, estimate: tenEach });
    await plainTurn(store, KEY, "two", "2");
    const second = await store.loadHistory(KEY, { tokenBudget: 1000, estimate: tenEach });
    expect(shape(second)).toEqual(["user:one", "assistant:1", "user:two", "assistant:2"]);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
    expect(Object.isFrozen(second[2])).toBe(true);
    expect(Object.isFrozen(second[2]!.content)).toBe(true);
    expect(second).toEqual(await uncached({ tokenBudget: 1000 }));
  });

  it("a rolled-back turn's rows leave the replay, and the row that takes their place is read afresh", async () => {
    await plainTurn(store, KEY, "one", "1");
    const turn = await store.beginTurn(KEY, userMessage("two"));
    const partial = assistantMessage("half an answer");
    await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [partial] });
    const before = await store.loadHistory(KEY);
    expect(shape(before).at(-1)).toBe("assistant:half an answer");
    // The rollback deletes the partial answer; the error marker is written at the same place (seq).
    await store.failTurn(turn.turnId, new Error("provider down"));
    const history = await store.loadHistory(KEY);
    expect(history.map((m) => m.id)).not.toContain(partial.id);
    expect(shape(history).slice(0, 3)).toEqual(["user:one", "assistant:1", "user:two"]);
    expect(history).toEqual(await uncached());
  });

  it("follows deletions of whole threads and a switch to a new thread", async () => {
    await plainTurn(store, KEY, "one", "1");
    await store.loadHistory(KEY);
    const thread = await store.newThread(KEY);
    await plainTurn(store, KEY, "fresh", "start");
    expect(shape(await store.loadHistory(KEY))).toEqual(["user:fresh", "assistant:start"]);
    await store.deleteThread(thread.id);
    expect(await store.loadHistory(KEY)).toEqual(await uncached());
  });

  it("puts the summary first after consolidation, cached or not", async () => {
    for (const n of ["one", "two", "three"]) await plainTurn(store, KEY, n, n.toUpperCase());
    await store.loadHistory(KEY);
    const all = await store.loadMessages(KEY);
    await store.markConsolidated(KEY, { fromMessageId: all[4]!.id, summary: assistantMessage("Summary: one, two.") });
    const history = await store.loadHistory(KEY, { tokenBudget: 1000, estimate: tenEach });
    expect(shape(history)).toEqual(["assistant:Summary: one, two.", "user:three", "assistant:THREE"]);
    expect(history).toEqual(await uncached({ tokenBudget: 1000 }));
  });

  it("sees rows another process wrote (the cache holds rows, not histories)", async () => {
    await plainTurn(store, KEY, "one", "1");
    await store.loadHistory(KEY);
    const other = stores.open();
    await plainTurn(other, KEY, "from elsewhere", "seen");
    expect(shape(await store.loadHistory(KEY))).toEqual(["user:one", "assistant:1", "user:from elsewhere", "assistant:seen"]);
  });

  it("reads histories longer than a page of places in order, and stops at the budget", async () => {
    for (let i = 0; i < 90; i++) await plainTurn(store, KEY, `q${i}`, `a${i}`);
    const all = await store.loadHistory(KEY);
    expect(all).toHaveLength(180);
    expect(shape(all).slice(0, 2)).toEqual(["user:q0", "assistant:a0"]);
    expect(shape(all).slice(-2)).toEqual(["user:q89", "assistant:a89"]);
    expect(all).toEqual(await uncached());
    // 1,500 tokens at 10 each: the newest 150 messages, which start at a user message.
    const budgeted = await store.loadHistory(KEY, { tokenBudget: 1500, estimate: tenEach });
    expect(budgeted).toHaveLength(150);
    expect(shape(budgeted)[0]).toBe("user:q15");
    expect(budgeted).toEqual(await uncached({ tokenBudget: 1500 }));
  });

  it("reads the same history whatever size of first read the caller expects", async () => {
    for (let i = 0; i < 90; i++) await plainTurn(store, KEY, `q${i}`, `a${i}`);
    for (const tokenBudget of [1500, 5000]) {
      const reference = await uncached({ tokenBudget });
      for (const expectedMessages of [1, 64, 65, 150, 158, 180, 5_000]) {
        expect(await stores.open().loadHistory(KEY, { tokenBudget, estimate: tenEach, expectedMessages })).toEqual(reference);
        expect(await store.loadHistory(KEY, { tokenBudget, estimate: tenEach, expectedMessages })).toEqual(reference);
      }
    }
  });
});

await describeEachStore("a store with a small history cache", (kind) => {
  let stores: TempStores<PortableSessionStore>;
  storePerTest((fx) => ({ stores } = fx), kind);

  it("replays correctly while the cache fills and clears in the middle of a load", async () => {
    const small = openSpec(stores.spec("small.db"), { historyCacheBytes: 6_000 });
    try {
      // 30 messages, one page of places, about 16 of them fit in the cache: every load clears it midway.
      for (let i = 0; i < 15; i++) await plainTurn(small, KEY, `question ${i} ${"x".repeat(40)}`, `answer ${i}`);
      const reference = await stores.open("small.db").loadHistory(KEY);
      expect(reference).toHaveLength(30);
      for (let round = 0; round < 3; round++) {
        expect(await small.loadHistory(KEY)).toEqual(reference);
        expect(await small.loadHistory(KEY, { tokenBudget: 1000, estimate: tenEach, expectedMessages: 40 })).toEqual(reference);
      }
      expect(await small.loadHistory(KEY, { tokenBudget: 200, estimate: tenEach })).toHaveLength(20);
    } finally {
      await small.close();
    }
  });
});

describe("ParsedMessages", () => {
  const row = (id: string, seq: number, text: string) => ({
    id,
    thread_id: "t1",
    seq,
    role: "user" as const,
    content: JSON.stringify([{ type: "text", text }]),
    tool_calls: null,
    tool_call_id: null,
    tool_name: null,
    reasoning: null,
    usage: null,
    created_at: 1,
    turn_id: null,
    flags: null,
    attrs: null,
    tokens: null,
    token_basis: null,
  });

  it("answers only for the same id at the same thread and place", () => {
    const cache = new ParsedMessages();
    const message = cache.parse(row("m1", 3, "hi"));
    expect(message).toEqual(rowToMessage(row("m1", 3, "hi")));
    expect(cache.get("t1", ["m1", 3])).toBe(message);
    expect(cache.get("t1", ["m1", 4])).toBeUndefined();
    expect(cache.get("t2", ["m1", 3])).toBeUndefined();
    expect(cache.get("t1", ["m2", 3])).toBeUndefined();
  });

  it("is cleared wholesale when it would hold more than its heap budget", () => {
    // Each row weighs 320 (a cached message's own cost) + its 127 characters of JSON: three fit in 1,400, a fourth does not.
    const cache = new ParsedMessages(1_400);
    for (let i = 0; i < 3; i++) cache.parse(row(`m${i}`, i, "x".repeat(100)));
    expect(cache.size).toBe(3);
    cache.parse(row("m3", 3, "x".repeat(100)));
    expect(cache.size).toBe(1);
    expect(cache.get("t1", ["m3", 3])).toBeDefined();
  });

  it("counts text beyond Latin-1 at two bytes a character, as V8 stores it", () => {
    // 320 + 2 × 127: two fit in 1,400, a third does not.
    const cache = new ParsedMessages(1_400);
    for (let i = 0; i < 2; i++) cache.parse(row(`w${i}`, i, "漢".repeat(100)));
    expect(cache.size).toBe(2);
    cache.parse(row("w2", 2, "漢".repeat(100)));
    expect(cache.size).toBe(1);
  });
});
