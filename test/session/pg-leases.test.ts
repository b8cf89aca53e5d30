/**
 * Session leases on PostgreSQL: two store instances are two workers (each its own connections).
 * A lease is held by one worker at a time, waiters are served in arrival order, an abandoned
 * wait leaves no lock behind, and a pending turn is closed only once its worker lost the lease.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import { PgSessionStore, TURN_INTERRUPTED, historyProblems } from "../../src/session/index.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";
import { call, callingAssistant, runResult, shape } from "./helpers/temp-store.js";

const postgres = await needsPostgres();

let schema: string;
const opened: PgSessionStore[] = [];
const worker = (): PgSessionStore => {
  const store = new PgSessionStore({ url: TEST_PG_URL, schema });
  opened.push(store);
  return store;
};
beforeEach(() => {
  schema = uniqueSchema("lease");
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await dropSchemas([schema]);
});

async function sql<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** The server's advisory locks on the lease of `sessionKey` in this test's schema. */
const LEASE_LOCKS = `FROM pg_locks WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`;
const leaseName = (sessionKey: string): string => `nanobot:lease:${schema}:${sessionKey}`;

/** Workers queued for the lease of `sessionKey`. */
async function waiting(sessionKey = "api:s1"): Promise<number> {
  const rows = await sql<{ n: number }>(`SELECT count(*)::int AS n ${LEASE_LOCKS} AND NOT granted`, [leaseName(sessionKey)]);
  return rows[0]!.n;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("condition never held");
}

postgres.describe("session leases", () => {
  describe("one holder at a time, in arrival order", () => {
    it("a second worker's lease waits until the first releases, then the next waiter", async () => {
      const [a, b, c] = [worker(), worker(), worker()];
      await a.migrate();
      const log: string[] = [];
      const first = await a.leaseSession("api:s1");
      log.push("a");
      const second = b.leaseSession("api:s1").then((l) => (log.push("b"), l));
      await until(async () => (await waiting()) >= 1);
      const third = c.leaseSession("api:s1").then((l) => (log.push("c"), l));
      await until(async () => (await waiting()) >= 2);
      // Another session is not held up.
      const other = await b.leaseSession("api:s2");
      await other.release();
      expect(log).toEqual(["a"]);
      await first.release();
      const lb = await second;
      expect(log).toEqual(["a", "b"]);
      await lb.release();
      await (await third).release();
      expect(log).toEqual(["a", "b", "c"]);
    });

    it("an abandoned wait leaves no lock behind", async () => {
      const [a, b] = [worker(), worker()];
      const held = await a.leaseSession("api:s1");
      const stop = new AbortController();
      const wait = b.leaseSession("api:s1", stop.signal);
      await until(async () => (await waiting()) >= 1);
      stop.abort();
      await expect(wait).rejects.toMatchObject({ code: "aborted" });
      await held.release();
      const again = await b.leaseSession("api:s1");
      const third = await worker().leaseSession("api:s2");
      await third.release();
      await again.release();
      expect(await waiting()).toBe(0);
    });
  });

  describe("pending turns and their owner's lease", () => {
    it("leaves a live worker's pending turn alone; the next turn waits for it to close", async () => {
      const [a, b] = [worker(), worker()];
      const turn = await a.beginTurn("api:s1", userMessage("first"));
      expect(await b.recoverDanglingTurns("api:s1")).toBe(0);
      const order: string[] = [];
      const next = b.beginTurn("api:s1", userMessage("second")).then((h) => (order.push("b began"), h));
      await until(async () => (await waiting()) >= 1);
      order.push("a completes");
      await a.completeTurn(turn.turnId, runResult([assistantMessage("one")]));
      const handle = await next;
      expect(order).toEqual(["a completes", "b began"]);
      expect(handle.recoveredTurns).toBe(0);
      await b.completeTurn(handle.turnId, runResult([assistantMessage("two")]));
      expect(shape(await b.loadHistory("api:s1"))).toEqual(["user:first", "assistant:one", "user:second", "assistant:two"]);
    });

    it("closes the turn of a worker whose lock connection died, and that worker learns it lost the lease", async () => {
      const [a, b] = [worker(), worker()];
      const lease = await a.leaseSession("api:s1");
      await a.beginTurn("api:s1", userMessage("first"));
      // The server ends the worker's lock connection (as when its process or machine dies).
      await sql(`SELECT pg_terminate_backend(pid) ${LEASE_LOCKS} AND granted`, [leaseName("api:s1")]);
      await until(async () => lease.lost.aborted);
      const handle = await b.beginTurn("api:s1", userMessage("second"));
      expect(handle.recoveredTurns).toBe(1);
      expect(shape(await b.loadHistory("api:s1"))).toEqual(["user:first", `assistant:${TURN_INTERRUPTED}`, "user:second"]);
      await lease.release();
    });
  });

  describe("resuming a dead worker's turn", () => {
    /** Worker `a` began a turn that called a tool, then its lock connection died. */
    async function deadTurn(a: PgSessionStore): Promise<string> {
      const lease = await a.leaseSession("api:s1");
      const user = userMessage("book the flight");
      const turn = await a.beginTurn("api:s1", user);
      const assistant = callingAssistant("Booking.", call("call_1", "book", {}));
      await a.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [assistant], assistant, pendingToolCalls: [call("call_1", "book", {})] });
      await sql(`SELECT pg_terminate_backend(pid) ${LEASE_LOCKS} AND granted`, [leaseName("api:s1")]);
      await until(async () => lease.lost.aborted);
      return user.id;
    }

    it("keeps the message and what the turn completed; the reopened turn answers it", async () => {
      const [a, b] = [worker(), worker()];
      const userId = await deadTurn(a);
      const handle = await b.reopenInterruptedTurn("api:s1", userId);
      expect(handle).toMatchObject({ userMessageId: userId, recoveredTurns: 1 });
      expect(shape(await b.loadHistory("api:s1"))).toEqual(["user:book the flight", "assistant:Booking.[call_1]", `tool(call_1):${TURN_INTERRUPTED}`]);
      await b.completeTurn(handle.turnId, runResult([assistantMessage("Booked.")]));
      const history = await b.loadHistory("api:s1");
      expect(shape(history)).toEqual(["user:book the flight", "assistant:Booking.[call_1]", `tool(call_1):${TURN_INTERRUPTED}`, "assistant:Booked."]);
      expect(historyProblems(history)).toEqual([]);
      expect((await b.getTurn(handle.turnId))?.status).toBe("completed");
    });

    /** Worker `w` reopened the turn of `userId`, called another tool, then its lock connection died too. */
    async function deadAgain(w: PgSessionStore, userId: string, callId: string): Promise<string> {
      const lease = await w.leaseSession("api:s1");
      const handle = await w.reopenInterruptedTurn("api:s1", userId);
      const assistant = callingAssistant("Retrying.", call(callId, "book", {}));
      await w.saveCheckpoint(handle.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [assistant], assistant, pendingToolCalls: [call(callId, "book", {})] });
      await sql(`SELECT pg_terminate_backend(pid) ${LEASE_LOCKS} AND granted`, [leaseName("api:s1")]);
      await until(async () => lease.lost.aborted);
      return handle.turnId;
    }

    it("a reopened turn cut off in its turn is reopened again, keeping what each attempt completed", async () => {
      const [a, b, c, d] = [worker(), worker(), worker(), worker()];
      const userId = await deadTurn(a);
      await deadAgain(b, userId, "call_2");
      await deadAgain(c, userId, "call_3");
      const handle = await d.reopenInterruptedTurn("api:s1", userId);
      expect(handle).toMatchObject({ userMessageId: userId, recoveredTurns: 1 });
      await d.completeTurn(handle.turnId, runResult([assistantMessage("Booked.")]));
      const history = await d.loadHistory("api:s1");
      expect(shape(history)).toEqual([
        "user:book the flight",
        "assistant:Booking.[call_1]",
        `tool(call_1):${TURN_INTERRUPTED}`,
        "assistant:Retrying.[call_2]",
        `tool(call_2):${TURN_INTERRUPTED}`,
        "assistant:Retrying.[call_3]",
        `tool(call_3):${TURN_INTERRUPTED}`,
        "assistant:Booked.",
      ]);
      expect(historyProblems(history)).toEqual([]);
      // Answered now: one more retry gets that answer from the last attempt, no new turn.
      await expect(worker().reopenInterruptedTurn("api:s1", userId)).rejects.toMatchObject({ code: "turn_already_answered", turnId: handle.turnId, answer: "Booked." });
    });

    it("refuses once the conversation went on after the interrupted turn", async () => {
      const [a, b] = [worker(), worker()];
      const userId = await deadTurn(a);
      const next = await b.beginTurn("api:s1", userMessage("hello?"));
      await b.completeTurn(next.turnId, runResult([assistantMessage("Hi.")]));
      await expect(b.reopenInterruptedTurn("api:s1", userId)).rejects.toMatchObject({ code: "turn_not_resumable" });
      // The refusal changed nothing and left no lease held.
      expect(shape(await b.loadHistory("api:s1")).at(-1)).toBe("assistant:Hi.");
      await (await worker().leaseSession("api:s1")).release();
    });

    it("a message never stored, or a turn that completed, is not reopened: the store says which", async () => {
      const [a, b] = [worker(), worker()];
      await a.migrate();
      await expect(b.reopenInterruptedTurn("api:s1", "msg_never_stored")).rejects.toMatchObject({ code: "message_not_stored" });
      const user = userMessage("what time is it?");
      const turn = await a.beginTurn("api:s1", user);
      await a.completeTurn(turn.turnId, runResult([assistantMessage("Noon.")]));
      // Its worker died before the caller heard the answer: the retry gets that answer, no new turn.
      await expect(b.reopenInterruptedTurn("api:s1", user.id)).rejects.toMatchObject({ code: "turn_already_answered", turnId: turn.turnId, answer: "Noon." });
      expect(shape(await b.loadHistory("api:s1"))).toEqual(["user:what time is it?", "assistant:Noon."]);
    });
  });
});
