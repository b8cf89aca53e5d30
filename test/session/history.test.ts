import { describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import type { Message } from "../../src/core/index.js";
import { trimToBudget } from "../../src/session/index.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { call, callingAssistant, plainTurn, result, runResult, shape, describeEachStore, storePerTest } from "./helpers/temp-store.js";

const KEY = "cli:direct";
/** Every message costs 10 tokens: budgets below read as message counts. */
const tenEach = (_m: Message): number => 10;

await describeEachStore("history loading", (kind) => {
  let store: PortableSessionStore;
  storePerTest((fx) => ({ store } = fx), kind);

  async function toolTurn(n: number): Promise<void> {
    const turn = await store.beginTurn(KEY, userMessage(`q${n}`));
    const a = callingAssistant("", call(`c${n}`, "ls"));
    await store.completeTurn(turn.turnId, runResult([a, result(`c${n}`, "ls", `r${n}`), assistantMessage(`a${n}`)]));
  }

  describe("loadHistory with a token budget", () => {
    it("keeps the newest whole turns and starts at a user message", async () => {
      for (let i = 1; i <= 3; i++) await toolTurn(i); // 4 messages (40 tokens) per turn
      // 100 tokens fit 2.5 turns: the cut moves forward to the user message of turn 2.
      expect(shape(await store.loadHistory(KEY, { tokenBudget: 100, estimate: tenEach }))).toEqual([
        "user:q2",
        "assistant:[c2]",
        "tool(c2):r2",
        "assistant:a2",
        "user:q3",
        "assistant:[c3]",
        "tool(c3):r3",
        "assistant:a3",
      ]);
      expect(shape(await store.loadHistory(KEY, { tokenBudget: 79, estimate: tenEach }))[0]).toBe("user:q3");
    });

    it("returns the last user turn even when it alone exceeds the budget", async () => {
      await toolTurn(1);
      expect(shape(await store.loadHistory(KEY, { tokenBudget: 5, estimate: tenEach }))).toEqual([
        "user:q1",
        "assistant:[c1]",
        "tool(c1):r1",
        "assistant:a1",
      ]);
    });

    it("trimToBudget applies the same rule to an in-memory list", () => {
      const list = [userMessage("u1"), assistantMessage("a1"), userMessage("u2"), assistantMessage("a2")];
      expect(shape(trimToBudget(list, 35, tenEach))).toEqual(["user:u2", "assistant:a2"]);
    });
  });

  describe("consolidation point", () => {
    it("replays from the cursor with the summary first; older messages stay readable", async () => {
      await plainTurn(store, KEY, "one", "1");
      await plainTurn(store, KEY, "two", "2");
      await plainTurn(store, KEY, "three", "3");
      const all = await store.loadMessages(KEY);
      const summary = assistantMessage("Summary: the user counted to two.");
      await store.markConsolidated(KEY, { fromMessageId: all[4]!.id, summary });

      const history = await store.loadHistory(KEY);
      expect(shape(history)).toEqual(["assistant:Summary: the user counted to two.", "user:three", "assistant:3"]);
      expect(history[0]!.meta).toEqual({ summary: true });
      expect(shape(await store.loadHistory(KEY, { tokenBudget: 25, estimate: tenEach }))).toEqual([
        "assistant:Summary: the user counted to two.",
        "user:three",
        "assistant:3",
      ]);
      expect(await store.loadMessages(KEY)).toHaveLength(7);
    });

    it("a summary message produced inside a turn becomes the replay point", async () => {
      await plainTurn(store, KEY, "old", "old reply");
      const user = userMessage("new");
      const turn = await store.beginTurn(KEY, user);
      const summary = assistantMessage("Summary of old stuff");
      summary.meta = { summary: true };
      await store.completeTurn(turn.turnId, runResult([summary, assistantMessage("fresh reply")], { archivedMessages: [] }));
      expect(shape(await store.loadHistory(KEY))).toEqual(["assistant:Summary of old stuff", "user:new", "assistant:fresh reply"]);
    });
  });
});
