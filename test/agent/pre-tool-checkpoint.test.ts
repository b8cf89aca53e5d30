/**
 * The product turn writes a round's tool calls to the store before they run only when a crash in
 * the middle would leave something to record (issue 25): a call to a tool that may act. A round
 * of read-only calls is saved whole, calls and results, once its tools are done.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { stateDbPath } from "../../src/config/paths.js";
import { createHarness, finalMessages, gateTool, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function storedRoles(harness: LoopHarness): string[] {
  const db = new Database(stateDbPath(harness.home), { readonly: true });
  try {
    return (db.prepare("SELECT role FROM messages ORDER BY seq").all() as Array<{ role: string }>).map((r) => r.role);
  } finally {
    db.close();
  }
}

async function runGatedTurn(readOnly: boolean): Promise<{ whileRunning: string[]; after: string[]; saves: number }> {
  const gate = gateTool("lookup");
  h = await createHarness({ tools: [readOnly ? { ...gate.tool, readOnly: true } : gate.tool] });
  let saves = 0;
  h.runtime.observeStore((operation) => {
    if (operation === "saveCheckpoint") saves++;
  });
  h.fake.enqueue({ toolCalls: [{ id: "c1", name: "lookup", arguments: { q: "apples" } }] }, { text: "You have 42 apples." });
  await h.send("how many apples?");
  await gate.started;
  const whileRunning = storedRoles(h);
  gate.release("42 apples");
  await waitFor(() => finalMessages(h!.outbound).length === 1);
  h.fake.assertDone();
  return { whileRunning, after: storedRoles(h), saves };
}

describe("the checkpoint before a round's tools run", () => {
  it("is written when a called tool may act: the call is on disk while the tool runs", async () => {
    const turn = await runGatedTurn(false);
    expect(turn.whileRunning).toEqual(["user", "assistant"]);
    expect(turn.after).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(turn.saves).toBe(2);
  });

  it("is skipped when every call goes to a read-only tool; the round is saved whole after it", async () => {
    const turn = await runGatedTurn(true);
    expect(turn.whileRunning).toEqual(["user"]);
    expect(turn.after).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(turn.saves).toBe(1);
  });
});
