/**
 * ThreadPlaces keeps the places of replayed rows between turns. It must read only what it has
 * not seen, and never answer with a place that is not in the database: after this connection's
 * appends, deletes and rolled-back transactions, and after another connection's writes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import type { Message } from "../../src/core/index.js";
import type { SqliteSessionStore } from "../../src/session/index.js";
import type { RowPlace } from "../../src/session/parsed-messages.js";
import { openDatabase, readTransaction, writeTransaction } from "../../src/session/sqlite-db.js";
import { ThreadPlaces } from "../../src/session/thread-places.js";
import { plainTurn, storePerTest } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";

const END = Number.MAX_SAFE_INTEGER;

describe("ThreadPlaces on a state database", () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;
  let queries: number;
  let places: ThreadPlaces;

  const truth = (thread: string, from: number, before: number, limit: number): RowPlace[] =>
    db
      .prepare<[string, number, number, number], RowPlace>("SELECT id, seq FROM messages WHERE thread_id = ? AND seq >= ? AND seq < ? ORDER BY seq DESC LIMIT ?")
      .raw()
      .all(thread, from, before, limit);
  const insert = (conn: Database.Database, thread: string, id: string, seq: number): void => {
    conn.prepare("INSERT INTO messages (id, thread_id, seq, role, content, created_at) VALUES (?, ?, ?, 'user', '[]', 0)").run(id, thread, seq);
  };
  /** A page as the store reads one: inside a read transaction, validated first. */
  const page = (thread: string, from = 0, before = END, limit = 4): Promise<RowPlace[]> =>
    readTransaction(db, () => {
      places.validate();
      return places.page(thread, from, before, limit);
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "nanobot-places-"));
    db = openDatabase(join(dir, "state.db"));
    other = openDatabase(join(dir, "state.db"));
    queries = 0;
    places = new ThreadPlaces(db, (...args) => {
      queries++;
      return truth(...args);
    });
    db.prepare("INSERT INTO sessions (key, created_at, updated_at) VALUES ('s', 0, 0)").run();
    for (const t of ["t1", "t2"]) db.prepare("INSERT INTO threads (id, session_key, status, created_at, updated_at) VALUES (?, 's', 'active', 0, 0)").run(t);
    for (let seq = 1; seq <= 6; seq++) insert(db, "t1", `m${seq}`, seq);
  });
  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers the next turn's page from memory, with this connection's appends", async () => {
    expect(await page("t1")).toEqual(truth("t1", 0, END, 4));
    expect(queries).toBe(1);
    await writeTransaction(db, () => insert(db, "t1", "m7", 7));
    expect(await page("t1")).toEqual([["m7", 7], ["m6", 6], ["m5", 5], ["m4", 4]]);
    expect(queries).toBe(1);
  });

  it("reads older pages once and keeps them", async () => {
    await page("t1");
    expect(await page("t1", 0, 3, 4)).toEqual(truth("t1", 0, 3, 4));
    expect(queries).toBe(2);
    expect(await page("t1", 0, 3, 4)).toEqual([["m2", 2], ["m1", 1]]);
    expect(await page("t1", 0, END, 10)).toEqual(truth("t1", 0, END, 10));
    expect(queries).toBe(2);
  });

  it("forgets a thread when one of its rows is deleted, moved or inserted before its end; other threads stay", async () => {
    await page("t1");
    await page("t2");
    await writeTransaction(db, () => db.prepare("DELETE FROM messages WHERE id = 'm6'").run());
    expect(await page("t1")).toEqual(truth("t1", 0, END, 4));
    expect(queries).toBe(3);
    await writeTransaction(db, () => db.prepare("UPDATE messages SET seq = 40 WHERE id = 'm2'").run());
    expect(await page("t1", 0, END, 10)).toEqual(truth("t1", 0, END, 10));
    await writeTransaction(db, () => insert(db, "t1", "m3b", 3.5));
    expect(await page("t1", 0, END, 10)).toEqual(truth("t1", 0, END, 10));
    const before = queries;
    expect(await page("t2")).toEqual([]);
    expect(queries).toBe(before);
  });

  it("never shows a row of a rolled-back transaction, nor of a rolled-back savepoint", async () => {
    await page("t1");
    await expect(
      writeTransaction(db, () => {
        insert(db, "t1", "ghost", 7);
        throw new Error("the turn failed after saving");
      }),
    ).rejects.toThrow("failed");
    expect(await page("t1")).toEqual(truth("t1", 0, END, 4));
    await writeTransaction(db, () => {
      // A nested transaction is a savepoint: it rolls back alone and the outer one commits.
      void writeTransaction(db, () => {
        insert(db, "t1", "ghost2", 7);
        throw new Error("inner");
      }).catch(() => undefined);
      insert(db, "t1", "m7", 7);
    });
    expect(await page("t1")).toEqual(truth("t1", 0, END, 4));
    expect((await page("t1")).map((p) => p[0])).toEqual(["m7", "m6", "m5", "m4"]);
  });

  it("forgets everything when another connection writes", async () => {
    await page("t1");
    insert(other, "t1", "theirs", 7);
    expect(await page("t1")).toEqual(truth("t1", 0, END, 4));
    expect((await page("t1"))[0]).toEqual(["theirs", 7]);
    other.prepare("DELETE FROM messages WHERE id = 'm5'").run();
    expect(await page("t1")).toEqual(truth("t1", 0, END, 4));
  });

  it("keeps its places across another connection's PASSIVE checkpoint (the gateway's)", async () => {
    await page("t1");
    other.pragma("wal_checkpoint(PASSIVE)");
    await page("t1");
    expect(queries).toBe(1);
  });

  it("starts over when the replay start moves (a consolidation)", async () => {
    await page("t1", 0);
    expect(await page("t1", 4, END, 10)).toEqual(truth("t1", 4, END, 10));
    expect(queries).toBe(2);
  });

  it("stays under its bound by starting over", async () => {
    const small = new ThreadPlaces(db, (...args) => truth(...args), 5);
    const read = (before = END) =>
      readTransaction(db, () => {
        small.validate();
        return small.page("t1", 0, before, 4);
      });
    await read();
    await writeTransaction(db, () => insert(db, "t1", "m7", 7));
    await writeTransaction(db, () => insert(db, "t1", "m8", 8));
    expect(await read()).toEqual(truth("t1", 0, END, 4));
    expect(await read(5)).toEqual(truth("t1", 0, 5, 4));
  });
});

describe("the store's history replay with remembered places", () => {
  let stores: TempStores;
  let store: SqliteSessionStore;
  storePerTest((fx) => ({ stores, store } = fx));
  const KEY = "api:places";

  it("matches a fresh store's read after every kind of change, over many pages", async () => {
    const reference = async (): Promise<string[]> => (await stores.open("state.db").loadHistory(KEY)).map((m) => m.id);
    const seed: Message[] = [];
    for (let i = 0; i < 150; i++) seed.push(i % 2 === 0 ? userMessage(`q${i}`) : assistantMessage(`a${i}`));
    await store.appendMessages(KEY, seed);
    const check = async () => expect((await store.loadHistory(KEY)).map((m) => m.id)).toEqual(await reference());
    await check();
    await plainTurn(store, KEY, "next", "answer");
    await check();
    const failing = await store.beginTurn(KEY, userMessage("will fail"));
    await store.saveCheckpoint(failing.turnId, { phase: "tools_completed", iteration: 1, newMessages: [assistantMessage("partial work")] });
    await check();
    // The rollback deletes the saved partial work.
    await store.failTurn(failing.turnId, new Error("model down"));
    await check();
    // Another process's turn on the same file.
    await plainTurn(stores.open("state.db"), KEY, "elsewhere", "there");
    await check();
    await store.newThread(KEY);
    await check();
    await plainTurn(store, KEY, "new thread", "fresh");
    await check();
    const budget = { tokenBudget: 40, estimate: () => 10 };
    expect((await store.loadHistory(KEY, budget)).map((m) => m.id)).toEqual((await stores.open("state.db").loadHistory(KEY, budget)).map((m) => m.id));
  });
});
