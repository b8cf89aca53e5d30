/**
 * Reopening an interrupted turn on SQLite (the single-node store): a process that died mid-turn
 * is a second store instance on the same file finding the turn still pending. The rule is the
 * one the PostgreSQL store follows (src/session/reopen-plan.ts; its own suite drives it with
 * killed lock connections in pg-leases.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import { TURN_INTERRUPTED, historyProblems } from "../../src/session/index.js";
import type { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { call, callingAssistant, runResult, shape, tempStores } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";

let stores: TempStores;
beforeEach(async () => {
  stores = await tempStores();
});
afterEach(async () => {
  await stores.cleanup();
});

/** A process began a turn for "book the flight", saved a tool call, and died. */
async function deadTurn(): Promise<string> {
  const a = stores.open();
  const user = userMessage("book the flight");
  const turn = await a.beginTurn("api:s1", user);
  const assistant = callingAssistant("Booking.", call("call_1", "book", {}));
  await a.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [assistant], assistant, pendingToolCalls: [call("call_1", "book", {})] });
  return user.id;
}

/** The process that reopened the turn of `userId` called another tool, then died too. */
async function deadAgain(w: SqliteSessionStore, userId: string, callId: string): Promise<void> {
  const handle = await w.reopenInterruptedTurn("api:s1", userId);
  const assistant = callingAssistant("Retrying.", call(callId, "book", {}));
  await w.saveCheckpoint(handle.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [assistant], assistant, pendingToolCalls: [call(callId, "book", {})] });
}

describe("SqliteSessionStore.reopenInterruptedTurn", () => {
  it("keeps the message and what the turn completed; the reopened turn answers it", async () => {
    const userId = await deadTurn();
    const b = stores.open();
    const handle = await b.reopenInterruptedTurn("api:s1", userId);
    expect(handle).toMatchObject({ userMessageId: userId, recoveredTurns: 1 });
    expect(shape(await b.loadHistory("api:s1"))).toEqual(["user:book the flight", "assistant:Booking.[call_1]", `tool(call_1):${TURN_INTERRUPTED}`]);
    await b.completeTurn(handle.turnId, runResult([assistantMessage("Booked.")]));
    const history = await b.loadHistory("api:s1");
    expect(shape(history)).toEqual(["user:book the flight", "assistant:Booking.[call_1]", `tool(call_1):${TURN_INTERRUPTED}`, "assistant:Booked."]);
    expect(historyProblems(history)).toEqual([]);
    expect((await b.getTurn(handle.turnId))?.status).toBe("completed");
  });

  it("a reopened turn cut off in its turn is reopened again; once answered, a retry gets the answer", async () => {
    const userId = await deadTurn();
    await deadAgain(stores.open(), userId, "call_2");
    const d = stores.open();
    const handle = await d.reopenInterruptedTurn("api:s1", userId);
    await d.completeTurn(handle.turnId, runResult([assistantMessage("Booked.")]));
    const history = await d.loadHistory("api:s1");
    expect(shape(history)).toEqual([
      "user:book the flight",
      "assistant:Booking.[call_1]",
      `tool(call_1):${TURN_INTERRUPTED}`,
      "assistant:Retrying.[call_2]",
      `tool(call_2):${TURN_INTERRUPTED}`,
      "assistant:Booked.",
    ]);
    expect(historyProblems(history)).toEqual([]);
    await expect(stores.open().reopenInterruptedTurn("api:s1", userId)).rejects.toMatchObject({ code: "turn_already_answered", turnId: handle.turnId, answer: "Booked." });
  });

  it("refuses once the conversation went on, and changes nothing", async () => {
    const userId = await deadTurn();
    const b = stores.open();
    const next = await b.beginTurn("api:s1", userMessage("hello?"));
    await b.completeTurn(next.turnId, runResult([assistantMessage("Hi.")]));
    await expect(b.reopenInterruptedTurn("api:s1", userId)).rejects.toMatchObject({ code: "turn_not_resumable" });
    expect(shape(await b.loadHistory("api:s1")).at(-1)).toBe("assistant:Hi.");
  });

  it("a message never stored, or a turn that completed, is not reopened: the store says which", async () => {
    const b = stores.open();
    await expect(b.reopenInterruptedTurn("api:s1", "msg_never_stored")).rejects.toMatchObject({ code: "message_not_stored" });
    const user = userMessage("what time is it?");
    const turn = await b.beginTurn("api:s1", user);
    await b.completeTurn(turn.turnId, runResult([assistantMessage("Noon.")]));
    await expect(stores.open().reopenInterruptedTurn("api:s1", user.id)).rejects.toMatchObject({ code: "turn_already_answered", turnId: turn.turnId, answer: "Noon." });
    expect(shape(await b.loadHistory("api:s1"))).toEqual(["user:what time is it?", "assistant:Noon."]);
  });
});
