/**
 * Issue 24 item 1 through the built CLI (`bin/nanobot.js`, so `npm run build` first): the
 * PostgreSQL store chosen by `store.url` (JSON and YAML configs) or `NANOBOT_STORE_URL`, an
 * `agent -m` turn stored there, `nanobot store migrate`, and `nanobot store copy` from a SQLite
 * `state.db` to PostgreSQL and back with every session, thread and message intact.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, expect } from "vitest";
import { assistantMessage, toolMessage, userMessage } from "../../src/core/index.js";
import { PgSessionStore, SqliteSessionStore } from "../../src/session/index.js";
import type { PortableSessionStore, SessionRecords } from "../../src/session/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot } from "../support/nanobot-cli.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();

let root: string;
let fake: FakeLLM;
let env: Record<string, string>;
let schema: string;
/** The test's own schema on the test database, as a store URL. */
let url: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-store-cli-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  env = { HOME: root, NANOBOT_HOME: join(root, "home") };
  schema = uniqueSchema("cli");
  url = `${TEST_PG_URL}?schema=${schema}`;
});
afterEach(async () => {
  await fake.close();
  await dropSchemas([schema]);
  await rm(root, { recursive: true, force: true });
});

const nanobot = (args: string[], extraEnv: Record<string, string> = {}) => runNanobot(args, { cwd: root, env: { ...env, ...extraEnv } });

async function writeJsonConfig(store?: { url?: string; maxLeaseConnections?: unknown }): Promise<void> {
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-store-cli-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
      ...(store ? { store } : {}),
    }),
  );
}

async function rows<R>(sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_PG_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(sql)).rows as R[];
  } finally {
    await client.end();
  }
}

/** What a user sees of the stored conversation: role and text of every message of the session. */
async function storedTurns(key: string): Promise<Array<[string, string]>> {
  const found = await rows<{ role: string; content: string }>(
    `SELECT m.role, m.content FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.session_key = '${key}' ORDER BY m.seq`,
  );
  return found.map((r) => [r.role, (JSON.parse(r.content) as Array<{ text?: string }>).map((p) => p.text ?? "").join("")]);
}

postgres.describe("store.url selects the PostgreSQL store", () => {
  postgres.it("an agent -m turn (JSON config) is stored in PostgreSQL and read back by the next turn and by sessions list", async () => {
    await writeJsonConfig({ url });
    fake.enqueue({ text: "Stored in Postgres." }, { text: "Second answer." });
    const first = await nanobot(["agent", "-m", "remember the tulips"]);
    expect(first.stderr).toBe("");
    expect(first).toMatchObject({ code: 0, stdout: "Stored in Postgres.\n" });
    expect(await storedTurns("cli:direct")).toEqual([
      ["user", "remember the tulips"],
      ["assistant", "Stored in Postgres."],
    ]);
    expect(await rows("SELECT status, stop_reason FROM turns")).toEqual([{ status: "completed", stop_reason: "completed" }]);

    // The second turn's model request carries the history the first one stored in PostgreSQL.
    expect((await nanobot(["agent", "-m", "what did I say?"])).code).toBe(0);
    const body = fake.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(body.messages.filter((m) => m.role !== "system").map((m) => m.content)).toEqual(["remember the tulips", "Stored in Postgres.", "what did I say?"]);

    const list = await nanobot(["sessions", "list", "--json"]);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ key: string; messageCount: number }>).map((s) => [s.key, s.messageCount])).toEqual([["cli:direct", 4]]);
    fake.assertDone();
  });

  postgres.it("a Go-style nanobot.yaml takes store.url too", async () => {
    await writeFile(
      join(root, "nanobot.yaml"),
      [
        "providers:",
        "  custom:",
        `    apiBase: ${fake.openaiBaseURL}`,
        "    apiKey: sk-fake-store-cli-0002",
        "agents:",
        "  defaults:",
        "    model: custom/test-model",
        `    workspace: ${join(root, "ws")}`,
        "store:",
        `  url: "${url}"`,
        "",
      ].join("\n"),
    );
    fake.enqueue({ text: "yaml answer" });
    const run = await nanobot(["agent", "-m", "hello from yaml", "-s", "cli:yaml"]);
    expect(run).toMatchObject({ code: 0, stdout: "yaml answer\n" });
    expect(await storedTurns("cli:yaml")).toEqual([
      ["user", "hello from yaml"],
      ["assistant", "yaml answer"],
    ]);
  });

  postgres.it("NANOBOT_STORE_URL selects it without any store key, and nothing is written to state.db", async () => {
    await writeJsonConfig();
    fake.enqueue({ text: "env answer" });
    const run = await nanobot(["agent", "-m", "via env"], { NANOBOT_STORE_URL: url });
    expect(run).toMatchObject({ code: 0, stdout: "env answer\n" });
    expect(await storedTurns("cli:direct")).toEqual([
      ["user", "via env"],
      ["assistant", "env answer"],
    ]);
    const local = new SqliteSessionStore({ path: join(root, "home", "state.db") });
    try {
      expect(await local.listSessions()).toEqual([]);
    } finally {
      await local.close();
    }
  });

  postgres.it("config check refuses a store.url that is not a postgres:// URL, naming the key", async () => {
    await writeJsonConfig({ url: "mysql://root@localhost/nanobot" });
    const run = await nanobot(["config", "check"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/nanobot\.json.*store\.url.*expected a postgres:\/\/ URL/);
  });

  postgres.it("config check refuses a store.maxLeaseConnections below one and warns when the store is SQLite", async () => {
    await writeJsonConfig({ url: TEST_PG_URL, maxLeaseConnections: 0 });
    const refused = await nanobot(["config", "check"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/nanobot\.json.*store\.maxLeaseConnections.*expected a whole number of connections, 1 or more/);
    await writeJsonConfig({ maxLeaseConnections: 8 });
    const sqlite = await nanobot(["config", "check"]);
    expect(`${sqlite.stdout}${sqlite.stderr}`).toMatch(/store\.maxLeaseConnections applies to a PostgreSQL store only.*ignored/);
  });
});

postgres.describe("nanobot store migrate", () => {
  postgres.it("applies the schema once and then reports it up to date", async () => {
    await writeJsonConfig({ url });
    const first = await nanobot(["store", "migrate"]);
    expect(first.stderr).toBe("");
    expect(first.stdout).toMatch(/^PostgreSQL store postgres:\/\/.*: schema v3 \(applied v1, v2, v3\)\n$/);
    expect(await rows("SELECT version FROM nanobot_migrations ORDER BY version")).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    expect((await nanobot(["store", "migrate"])).stdout).toMatch(/schema v3 \(already up to date\)/);
  });
});

/** A SQLite state.db with two sessions, a named and an archived thread, tool traffic, a consolidation point. */
async function richSqlite(path: string): Promise<void> {
  const store = new SqliteSessionStore({ path });
  try {
    const t1 = await store.beginTurn("telegram:7", userMessage("list files"));
    const call = { type: "toolCall" as const, id: "c1", name: "ls", arguments: {}, rawArguments: "{}" };
    await store.completeTurn(t1.turnId, {
      content: "two files",
      newMessages: [assistantMessage("", [call]), toolMessage("c1", "ls", "a b"), assistantMessage("two files")],
      toolsUsed: ["ls"],
      usage: { promptTokens: 9, completionTokens: 3 },
      stopReason: "completed",
      iterations: 2,
    });
    await store.newThread("telegram:7");
    await store.openThread("telegram:7", "research");
    await store.appendMessages("telegram:7", [assistantMessage("research notes")]);
    await store.updateMetadata("telegram:7", { lang: "de" });
    const t2 = await store.beginTurn("api:x", userMessage("hi"));
    await store.failTurn(t2.turnId, new Error("provider down"));
    await store.beginTurn("api:x", userMessage("left pending"));
    const all = await store.loadMessages("api:x");
    await store.markConsolidated("api:x", { fromMessageId: all[2]!.id, summary: assistantMessage("earlier: a failure") });
  } finally {
    await store.close();
  }
}

async function everything(store: PortableSessionStore): Promise<SessionRecords[]> {
  const out: SessionRecords[] = [];
  for (const s of (await store.listSessions()).sort((a, b) => a.key.localeCompare(b.key))) out.push((await store.readRecords(s.key))!);
  return out;
}

postgres.describe("nanobot store copy", () => {
  postgres.it("moves every session, thread, message and turn from state.db to PostgreSQL and back, unchanged", async () => {
    const source = join(root, "state.db");
    await richSqlite(source);
    const toPg = await nanobot(["store", "copy", "--from", source, "--to", url]);
    expect(toPg.stderr).toBe("");
    expect(toPg.stdout).toMatch(/^copied 2 sessions \(4 threads, 9 messages, 3 turns\) from .*state\.db to postgres:\/\//);

    const back = join(root, "back.db");
    const toSqlite = await nanobot(["store", "copy", "--from", url, "--to", back]);
    expect(toSqlite.stdout).toMatch(/^copied 2 sessions \(4 threads, 9 messages, 3 turns\)/);

    const original = new SqliteSessionStore({ path: source });
    const inPg = new PgSessionStore({ url });
    const returned = new SqliteSessionStore({ path: back });
    try {
      const expected = await everything(original);
      expect(expected.flatMap((r) => r.messages)).toHaveLength(9);
      expect(await everything(inPg)).toEqual(expected);
      expect(await everything(returned)).toEqual(expected);
      // The copy is a working store: the replayed history and the pending turn came along.
      expect(await inPg.loadHistory("api:x")).toEqual(await original.loadHistory("api:x"));
      expect(await inPg.recoverDanglingTurns("api:x")).toBe(1);
    } finally {
      await original.close();
      await inPg.close();
      await returned.close();
    }
  });

  postgres.it("copying again replaces the sessions instead of doubling them; a missing source is an error", async () => {
    const source = join(root, "state.db");
    await richSqlite(source);
    expect((await nanobot(["store", "copy", "--from", source, "--to", url])).code).toBe(0);
    expect((await nanobot(["store", "copy", "--from", source, "--to", url])).code).toBe(0);
    expect(await rows("SELECT COUNT(*)::int AS n FROM messages")).toEqual([{ n: 9 }]);

    const missing = await nanobot(["store", "copy", "--from", join(root, "nope.db"), "--to", url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no SQLite database at .*nope\.db/);
  });
});
