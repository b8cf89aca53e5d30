import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { historyProblems } from "../../src/session/index.js";
import { backoffDelay, writeTransaction } from "../../src/session/sqlite-db.js";
import { tempStores } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";
import { spawnHelper, waitForExit } from "./helpers/spawn.js";

let stores: TempStores;
beforeEach(async () => {
  stores = await tempStores();
});
afterEach(async () => {
  await stores.cleanup();
});

describe("two processes writing different sessions at once", () => {
  it("leave a consistent database with every row present", async () => {
    const db = join(stores.dir, "state.db");
    stores.open(); // create the schema first so both children race only on turns
    const turns = 200;
    // A short SQLite busy timeout makes lock collisions surface as SQLITE_BUSY, exercising the retry.
    const children = ["telegram:1", "discord:2"].map((key) => spawnHelper("write-turns.ts", [db, key, String(turns), "20"]));
    const exits = await Promise.all(children.map(waitForExit));
    for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0 });

    const raw = new Database(db, { readonly: true });
    expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
    raw.close();
    const store = stores.open();
    for (const key of ["telegram:1", "discord:2"]) {
      const messages = await store.loadMessages(key);
      expect(messages).toHaveLength(turns * 4);
      expect(messages.filter((m) => m.role === "user").map((m) => m.content[0])).toEqual(
        Array.from({ length: turns }, (_, i) => ({ type: "text", text: `${key} question ${i}` })),
      );
      expect(historyProblems(messages)).toEqual([]);
    }
    const raw2 = new Database(db, { readonly: true });
    expect(raw2.prepare("SELECT status, COUNT(*) AS n FROM turns GROUP BY status").all()).toEqual([{ status: "completed", n: 2 * turns }]);
    raw2.close();
  }, 120_000);
});

describe("write retry on SQLITE_BUSY", () => {
  it("retries the whole transaction with growing backoff, then succeeds", async () => {
    const db = new Database(":memory:");
    const sleeps: number[] = [];
    let attempts = 0;
    const value = await writeTransaction(
      db,
      () => {
        attempts++;
        if (attempts < 4) throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
        return "written";
      },
      { retries: 5, baseDelayMs: 10, maxDelayMs: 1000, sleep: async (ms) => void sleeps.push(ms), random: () => 1 },
    );
    expect(value).toBe("written");
    expect(sleeps).toEqual([10, 20, 40]);
    db.close();
  });

  it("gives up after the configured retries and does not retry other errors", async () => {
    const db = new Database(":memory:");
    const policy = { retries: 2, baseDelayMs: 10, maxDelayMs: 15, sleep: async () => undefined, random: () => 0 };
    const busy = () => {
      throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    };
    await expect(writeTransaction(db, busy, policy)).rejects.toThrow(/locked/);
    let calls = 0;
    await expect(
      writeTransaction(db, () => {
        calls++;
        throw new Error("constraint");
      }, policy),
    ).rejects.toThrow(/constraint/);
    expect(calls).toBe(1);
    expect(backoffDelay(5, policy)).toBe(8); // capped at 15, half of it plus zero jitter
    db.close();
  });
});
