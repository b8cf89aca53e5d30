/**
 * Exact token counts stored with message rows (issue 25): a message written while the tokenizer
 * is loaded keeps its count in its row; a store reading it back (another process) hands the
 * count to the estimator, which then does not tokenise the message again. Rows without a count
 * (written before the migration, or before the tokenizer loaded) are counted as before.
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import type { Message } from "../../src/core/index.js";
import type { MessageTokenCounter, TokenCount } from "../../src/core/token-counts.js";
import { createTokenEstimator } from "../../src/engine/tokens/estimator.js";
import { PgSessionStore, SqliteSessionStore } from "../../src/session/index.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { call, describeEachStore, result, runResult, tempStores } from "./helpers/temp-store.js";
import type { StoreKind, StoreSpec, TempStores } from "./helpers/temp-store.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/v1.db", import.meta.url));

function openWith(spec: StoreSpec, tokenCounter?: MessageTokenCounter): PortableSessionStore {
  return spec.kind === "sqlite"
    ? new SqliteSessionStore({ path: spec.path, tokenCounter })
    : new PgSessionStore({ url: spec.url, schema: spec.schema, tokenCounter });
}

/** A counter that charges 1,000 + the text length: a count no tokenizer would give, so a test can tell it was used. */
const marked =
  (basis: string): MessageTokenCounter =>
  (m: Message): TokenCount => ({ basis, tokens: 1_000 + m.content.reduce((n, p) => n + (p.type === "text" ? p.text.length : 0), 0) });

await describeEachStore("stored token counts", (kind: StoreKind) => {
  let stores: TempStores<PortableSessionStore>;
  const opened: PortableSessionStore[] = [];
  const open = (counter?: MessageTokenCounter) => {
    const store = openWith(stores.spec(), counter);
    opened.push(store);
    return store;
  };
  beforeEach(async () => {
    stores = await tempStores(kind);
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await stores.cleanup();
  });

  it("a replayed history in another process is counted from its rows, not tokenised again", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    const writer = open(marked(estimator.basis));
    await writer.appendMessages("cli:direct", [userMessage("hello"), assistantMessage("hi there")]);
    const turn = await writer.beginTurn("cli:direct", userMessage("look it up"));
    await writer.completeTurn(
      turn.turnId,
      runResult([assistantMessage("", [call("c1", "lookup", { q: "x" })]), result("c1", "lookup", "found"), assistantMessage("done")]),
    );

    const history = await open().loadHistory("cli:direct");
    expect(history.map((m) => estimator.message(m))).toEqual([1005, 1008, 1010, 1000, 1005, 1004]);
  });

  it("stored counts are used before the tokenizer loads, when the rest is estimated roughly", async () => {
    const writer = open(marked(createTokenEstimator({ model: "gpt-4o" }).basis));
    await writer.appendMessages("cli:direct", [userMessage("hello"), assistantMessage("hi there")]);
    const [hello, hi] = await open().loadHistory("cli:direct");
    const rough = createTokenEstimator({ model: "gpt-4o" });
    expect(rough.ready).toBe(false);
    expect([rough.message(hello!), rough.message(hi!)]).toEqual([1005, 1008]);
    expect(rough.message(userMessage("hello"))).toBeLessThan(100);
  });

  it("a count made under other rules (another encoding) is not used: the message is tokenised", async () => {
    const writer = open(marked("cl100k_base#1"));
    await writer.appendMessages("cli:direct", [userMessage("hello world")]);
    const [message] = await open().loadHistory("cli:direct");
    const o200k = createTokenEstimator({ model: "gpt-4o" });
    await o200k.load();
    expect(o200k.message(message!)).toBe(o200k.message(userMessage("hello world")));
    expect(o200k.message(message!)).toBeLessThan(100);
  });

  it("rows written without a count are counted exactly, as before", async () => {
    await open().appendMessages("cli:direct", [userMessage("hello world, how are you?")]);
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    const [message] = await open().loadHistory("cli:direct");
    expect(estimator.message(message!)).toBe(estimator.message(userMessage("hello world, how are you?")));
  });

  it("the estimator gives counts to store only once its tokenizer has loaded, and they match its own", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    const m = userMessage("a sentence with a few words in it");
    expect(estimator.exact(m)).toBeUndefined();
    await estimator.load();
    const fresh = createTokenEstimator({ model: "gpt-4o" });
    await fresh.load();
    expect(estimator.exact(m)).toEqual({ basis: "o200k_base#1", tokens: fresh.message(userMessage("a sentence with a few words in it")) });
  });

  it("a session copied between stores keeps its counts", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    await open(marked(estimator.basis)).appendMessages("cli:direct", [userMessage("hello")]);
    const records = await open().readRecords("cli:direct");
    expect(records!.messages[0]).toMatchObject({ tokens: 1005, token_basis: estimator.basis });
    const target = openWith(stores.spec("copy.db"));
    opened.push(target);
    await target.writeRecords(records!);
    const [message] = await target.loadHistory("cli:direct");
    expect(estimator.message(message!)).toBe(1005);
  });
});

describe("stored token counts: SQLite migration", () => {
  let stores: TempStores<SqliteSessionStore>;
  beforeEach(async () => {
    stores = await tempStores();
  });
  afterEach(async () => {
    await stores.cleanup();
  });

  it("a v1 database gains the columns; its old rows have no count and still load", async () => {
    const path = join(stores.dir, "state.db");
    await copyFile(FIXTURE, path);
    const store = new SqliteSessionStore({ path });
    try {
      const history = await store.loadHistory("cli:direct");
      expect(history).toHaveLength(4);
      const raw = new Database(path, { readonly: true });
      expect(raw.prepare("SELECT COUNT(*) FROM messages WHERE tokens IS NOT NULL OR token_basis IS NOT NULL").pluck().get()).toBe(0);
      raw.close();
    } finally {
      await store.close();
    }
  });

  it("rows from an export made before the columns existed are copied without counts", async () => {
    const source = stores.open();
    await source.appendMessages("cli:direct", [userMessage("hello")]);
    const records = (await source.readRecords("cli:direct"))!;
    const old = { ...records, messages: records.messages.map(({ tokens: _t, token_basis: _b, ...rest }) => rest) };
    const target = stores.open("copy.db");
    await target.writeRecords(old as typeof records);
    expect((await target.loadHistory("cli:direct")).map((m) => m.content)).toEqual([[{ type: "text", text: "hello" }]]);
  });
});
