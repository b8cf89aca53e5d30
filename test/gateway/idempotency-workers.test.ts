/**
 * `Idempotency-Key` records when several workers share one store: each key is claimed by a
 * compare-and-set inside the session's write lock, so two workers that see a key free at the
 * same moment never both start its turn, and keys written at once in one session never
 * overwrite each other. Two store instances on one database stand for two workers.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { IdempotentRequests } from "../../src/gateway/idempotency.js";
import type { GatewayTurnResult } from "../../src/gateway/run-turn.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { needsPostgres } from "../support/postgres.js";
import { describeEachStore, tempStores } from "../session/helpers/temp-store.js";
import type { StoreKind, TempStores } from "../session/helpers/temp-store.js";

const SESSION = "api:shared";

function answer(content: string): GatewayTurnResult {
  return { reply: { content, sessionKey: SESSION, stopReason: "completed", toolsUsed: [], usage: { promptTokens: 1, completionTokens: 1 } }, timedOut: false };
}

await describeEachStore("Idempotency-Key records on a shared store", (kind: StoreKind) => {
  let stores: TempStores<PortableSessionStore>;
  let workers: Array<{ store: PortableSessionStore; requests: IdempotentRequests }>;
  beforeEach(async () => {
    stores = await tempStores(kind);
    workers = [stores.open(), stores.open()].map((store) => ({ store, requests: new IdempotentRequests(store) }));
  });
  afterEach(async () => {
    await stores.cleanup();
  });

  it("keys claimed at once by two workers in one session are all kept; every repeat replays", async () => {
    const keys = Array.from({ length: 24 }, (_, i) => `key-${i}`);
    const turns: string[] = [];
    const run = (key: string, i: number) =>
      workers[i % 2]!.requests.run(SESSION, key, `fp-${key}`, async () => {
        turns.push(key);
        await new Promise((resolve) => setTimeout(resolve, 1 + (i % 5)));
        return answer(`answer ${key}`);
      });
    const firsts = await Promise.all(keys.map(run));
    expect(firsts.map((r) => r.replayed)).toEqual(keys.map(() => false));
    // Each worker repeats the keys the other one ran: every one is known.
    const repeats = await Promise.all(keys.map((key, i) => run(key, i + 1)));
    expect(repeats.map((r) => [r.replayed, r.reply.content])).toEqual(keys.map((k) => [true, `answer ${k}`]));
    expect(turns.sort()).toEqual([...keys].sort());
  });
});

// SQLite has no worker ids: a second process finding a running key takes it as a restart's
// leftover (a 409, tested through the gateway in idempotency.test.ts). Workers are PostgreSQL's.
(await needsPostgres()).describe("Idempotency-Key: one key sent to two workers at the same moment [postgres]", () => {
  let stores: TempStores<PortableSessionStore>;
  beforeEach(async () => {
    stores = await tempStores("postgres");
  });
  afterEach(async () => {
    await stores.cleanup();
  });

  it("runs one turn; the other worker waits for it and replays its answer", async () => {
    for (let round = 0; round < 5; round++) {
      const workers = [stores.open(), stores.open()].map((store) => new IdempotentRequests(store));
      let turns = 0;
      const outcomes = await Promise.all(
        workers.map((w) =>
          w.run(SESSION, `same-${round}`, "fp", async () => {
            turns += 1;
            await new Promise((resolve) => setTimeout(resolve, 50));
            return answer(`the one answer ${round}`);
          }),
        ),
      );
      expect(turns).toBe(1);
      expect(outcomes.map((o) => o.reply.content)).toEqual([`the one answer ${round}`, `the one answer ${round}`]);
      expect(outcomes.map((o) => o.replayed).sort()).toEqual([false, true]);
    }
  });
});
