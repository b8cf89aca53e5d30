/**
 * Which checkpoints of a turn reach the store before the turn closes (issue 25; see
 * src/agent/checkpoint-policy.ts): a round's calls are written before they run when a called
 * tool may act; a quick round of read-only calls is not written on its own (the closing writes
 * it), a slow one is, and so is anything still unwritten that holds a message from the user.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SLOW_READ_ONLY_ROUND_MS } from "../../src/agent/checkpoint-policy.js";
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

function countSaves(harness: LoopHarness): { count: number } {
  const saves = { count: 0 };
  harness.runtime.observeStore((operation) => {
    if (operation === "saveCheckpoint") saves.count++;
  });
  return saves;
}

async function runGatedTurn(readOnly: boolean, holdMs = 0): Promise<{ whileRunning: string[]; after: string[]; saves: number }> {
  const gate = gateTool("lookup");
  h = await createHarness({ tools: [readOnly ? { ...gate.tool, readOnly: true } : gate.tool] });
  const saves = countSaves(h);
  h.fake.enqueue({ toolCalls: [{ id: "c1", name: "lookup", arguments: { q: "apples" } }] }, { text: "You have 42 apples." });
  await h.send("how many apples?");
  await gate.started;
  const whileRunning = storedRoles(h);
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  gate.release("42 apples");
  await waitFor(() => finalMessages(h!.outbound).length === 1);
  h.fake.assertDone();
  return { whileRunning, after: storedRoles(h), saves: saves.count };
}

describe("the checkpoints a turn writes before it closes", () => {
  it("writes the calls before a tool that may act runs, and the round after it", async () => {
    const turn = await runGatedTurn(false);
    expect(turn.whileRunning).toEqual(["user", "assistant"]);
    expect(turn.after).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(turn.saves).toBe(2);
  });

  it("leaves a quick read-only round to the closing, which writes it whole", async () => {
    const turn = await runGatedTurn(true);
    expect(turn.whileRunning).toEqual(["user"]);
    expect(turn.after).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(turn.saves).toBe(0);
  });

  it("writes a read-only round that ran for a while, once its tools are done", async () => {
    const turn = await runGatedTurn(true, SLOW_READ_ONLY_ROUND_MS + 100);
    expect(turn.whileRunning).toEqual(["user"]);
    expect(turn.after).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(turn.saves).toBe(1);
  });

  it("writes a message the user sent mid-turn before the next read-only round runs", async () => {
    const first = gateTool("lookup");
    const second = gateTool("peek");
    h = await createHarness({ tools: [{ ...first.tool, readOnly: true }, { ...second.tool, readOnly: true }] });
    const saves = countSaves(h);
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "lookup", arguments: {} }] });
    await h.send("how many apples?");
    await first.started;
    await h.send("and pears?");
    await waitFor(() => h!.loop.sessionState("telegram:42").queued === 1);
    h.fake.enqueue({ toolCalls: [{ id: "c2", name: "peek", arguments: {} }] }, { text: "42 apples, 7 pears." });
    first.release("42 apples");
    await second.started;
    // The injected message is on disk while the second round runs, with what came before it
    // (the quick first round) and the round's calls.
    expect(storedRoles(h)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
    expect(saves.count).toBe(1);
    second.release("7 pears");
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    expect(storedRoles(h)).toEqual(["user", "assistant", "tool", "user", "assistant", "tool", "assistant"]);
    h.fake.assertDone();
  });
});
