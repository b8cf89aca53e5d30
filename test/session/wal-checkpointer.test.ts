/**
 * Background WAL checkpoints (the gateway's store): commits stop folding the log into the
 * database themselves, a worker thread does it, and closing leaves a clean database file.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import type { SqliteSessionStore } from "../../src/session/index.js";
import { WalCheckpointer } from "../../src/session/wal-checkpointer.js";
import { createLogger } from "../../src/core/logger.js";
import { runResult, tempStores } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";

let stores: TempStores;
beforeEach(async () => {
  stores = await tempStores();
});
afterEach(async () => {
  await stores.cleanup();
});

/**
 * Turns with 4 KB answers: well over 1,000 WAL pages (SQLite's checkpoint threshold), and well
 * under the 10,000-page backstop, past which the log would be folded in and restarted.
 */
async function writeMuch(store: SqliteSessionStore): Promise<void> {
  const answer = "x".repeat(4096);
  for (let i = 0; i < 420; i++) {
    const turn = await store.beginTurn(`s${i % 7}`, userMessage(`q${i}`));
    await store.completeTurn(turn.turnId, runResult([assistantMessage(answer)]));
  }
}

const walBytes = (store: SqliteSessionStore): number => statSync(`${store.path}-wal`).size;

describe("WalCheckpointer", () => {
  it("without it, a commit checkpoints and the log is reused at ~1,000 pages; with it, commits leave the log to the worker", async () => {
    const plain = stores.open("plain.db");
    await writeMuch(plain);
    expect(walBytes(plain)).toBeLessThan(6 * 1024 * 1024);

    const served = stores.open("served.db");
    // An interval far beyond the test: only checkpointNow() folds the log in.
    const checkpointer = served.checkpointInBackground({ intervalMs: 3_600_000 })!;
    expect(served.checkpointInBackground()).toBe(checkpointer);
    await writeMuch(served);
    expect(walBytes(served)).toBeGreaterThan(8 * 1024 * 1024);

    const report = await checkpointer.checkpointNow();
    expect(report.logPages).toBeGreaterThan(2000);
    expect(report.checkpointedPages).toBe(report.logPages);
    // The data is all there, read through the main connection.
    expect((await served.loadMessages("s3")).length).toBe(120);
  });

  it("checkpoints on its timer after a commit, sleeps while nothing is written, and closing the store removes the log", async () => {
    const store = stores.open();
    const checkpointer = store.checkpointInBackground({ intervalMs: 20 })!;
    const until = async (done: () => boolean): Promise<void> => {
      const deadline = Date.now() + 5_000;
      while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    const turn = await store.beginTurn("s", userMessage("hi"));
    await store.completeTurn(turn.turnId, runResult([assistantMessage("hello")]));
    await until(() => checkpointer.completed >= 1);
    expect(checkpointer.completed).toBeGreaterThanOrEqual(1);
    // No commit: the timer finds the log folded and nothing new, runs nothing and stops.
    await until(() => checkpointer.sleeping);
    expect(checkpointer.sleeping).toBe(true);
    const idle = checkpointer.completed;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(checkpointer.completed).toBe(idle);
    // The next commit wakes it, and it is checkpointed on the timer again.
    const next = await store.beginTurn("s", userMessage("again"));
    expect(checkpointer.sleeping).toBe(false);
    await store.completeTurn(next.turnId, runResult([assistantMessage("hello again")]));
    await until(() => checkpointer.completed > idle);
    expect(checkpointer.completed).toBeGreaterThan(idle);
    // Another process's commits (the CLI on the same file) wake nothing: a ticking worker sees them.
    await until(() => checkpointer.sleeping);
    const asleep = checkpointer.completed;
    const other = stores.open();
    expect(other.path).toBe(store.path);
    await other.appendMessages("s", [userMessage("from the CLI")]);
    await other.close();
    expect(checkpointer.sleeping).toBe(true);
    // The gateway's own next commit wakes the worker, whose checkpoint folds both in.
    await store.appendMessages("s", [userMessage("from the gateway")]);
    await until(() => checkpointer.completed > asleep && checkpointer.sleeping);
    expect(checkpointer.completed).toBeGreaterThan(asleep);
    const report = await checkpointer.checkpointNow();
    expect(report.checkpointedPages).toBe(report.logPages);
    await store.close();
    expect(existsSync(`${store.path}-wal`)).toBe(false);
    await expect(checkpointer.checkpointNow()).rejects.toThrow(/stopped/);
  });

  it("a checkpoint asked for when the worker ends without answering is refused, not left pending", async () => {
    // The worker cannot open a database that is not there: it ends before it reads any message.
    const db = new Database(":memory:");
    const checkpointer = new WalCheckpointer({ db, path: join(stores.dir, "missing", "state.db"), logger: createLogger({ level: "error" }) });
    try {
      await expect(checkpointer.checkpointNow()).rejects.toThrow(/stopped/);
      await expect(checkpointer.checkpointNow()).rejects.toThrow(/stopped/);
      await checkpointer.close();
    } finally {
      db.close();
    }
  });
});
