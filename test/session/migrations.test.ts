import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/index.js";
import { MIGRATIONS, SCHEMA_VERSION, SqliteSessionStore, TURN_INTERRUPTED } from "../../src/session/index.js";
import { migrate, schemaVersion } from "../../src/session/schema.js";
import { shape, tempStores } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/v1.db", import.meta.url));

let stores: TempStores;
beforeEach(async () => {
  stores = await tempStores();
});
afterEach(async () => {
  await stores.cleanup();
});

async function openFixtureCopy(): Promise<SqliteSessionStore> {
  const path = join(stores.dir, "state.db");
  await copyFile(FIXTURE, path);
  return new SqliteSessionStore({ path });
}

function tableSchema(db: Database.Database): string[] {
  return (db.prepare("SELECT sql FROM sqlite_master WHERE type IN ('table','index') AND sql IS NOT NULL ORDER BY name").pluck().all() as string[])
    .map((sql) => sql.replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")").trim());
}

describe("golden v1 database", () => {
  it("upgrades to the current schema and its data stays readable", async () => {
    const store = await openFixtureCopy();
    try {
      const raw = new Database(store.path, { readonly: true });
      expect(schemaVersion(raw)).toBe(SCHEMA_VERSION);
      expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
      raw.close();

      const session = await store.getSession("cli:direct");
      expect(session).toMatchObject({ key: "cli:direct", metadata: { title: "Weather" }, currentThreadId: "thr_main", messageCount: 4 });
      const history = await store.loadHistory("cli:direct");
      expect(history.map((m) => m.id)).toEqual(["msg_u1", "msg_a1", "msg_t1", "msg_a2"]);
      expect(history[1]).toEqual({
        id: "msg_a1",
        role: "assistant",
        createdAt: 1767225602000,
        content: [
          { type: "reasoning", text: "Need the weather tool." },
          { type: "toolCall", id: "call_w", name: "weather", arguments: { city: "Paris" }, rawArguments: '{"city":"Paris"}' },
        ],
        usage: { promptTokens: 120, completionTokens: 14 },
        provider: "openai",
        model: "gpt-4o-mini",
        finishReason: "tool_calls",
      });
      expect(shape(history)).toEqual([
        "user:Weather in Paris?",
        "assistant:[call_w]",
        "tool(call_w):18°C, cloudy",
        "assistant:It is 18°C and cloudy in Paris.",
      ]);
      expect((await store.listThreads("cli:direct")).map((t) => [t.id, t.status])).toEqual([
        ["thr_old", "archived"],
        ["thr_main", "active"],
      ]);
      expect(await store.getTurn("turn_1")).toMatchObject({ status: "completed", usage: { promptTokens: 240, completionTokens: 30 } });

      // New writes work on the migrated file, including recovery of the old pending turn.
      const handle = await store.beginTurn("telegram:7", userMessage("still there?"));
      expect(handle.recoveredTurns).toBe(1);
      expect(shape(await store.loadHistory("telegram:7"))).toEqual([
        "user:remind me",
        `assistant:${TURN_INTERRUPTED}`,
        "user:still there?",
      ]);
    } finally {
      await store.close();
    }
  });

  it("was written with exactly the DDL of migration 1 (shipped migrations are never edited)", () => {
    const fixture = new Database(FIXTURE, { readonly: true });
    const fresh = new Database(":memory:");
    migrate(fresh, MIGRATIONS.slice(0, 1));
    expect(tableSchema(fixture)).toEqual(tableSchema(fresh));
    fixture.close();
    fresh.close();
  });
});

describe("migrate", () => {
  it("applies pending migrations once and refuses a database from a newer nanobot", () => {
    const db = new Database(":memory:");
    expect(migrate(db)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(migrate(db)).toEqual([]);
    db.prepare("INSERT INTO schema_version VALUES (?, 0, 'future')").run(SCHEMA_VERSION + 1);
    expect(() => migrate(db)).toThrow(/newer than this nanobot understands/);
    db.close();
  });
});
