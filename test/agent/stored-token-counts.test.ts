/**
 * The product saves each message's exact token count with its row once the tokenizer is loaded
 * (issue 25), by the default model's encoding, so a later process replays the history without
 * tokenising it again. Before the tokenizer loads, rows are saved without a count.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { stateDbPath } from "../../src/config/paths.js";
import { createTokenEstimator, sharedTokenEstimator } from "../../src/engine/tokens/estimator.js";
import { createHarness, finalMessages, gateTool, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Row {
  role: string;
  tokens: number | null;
  token_basis: string | null;
}

function rowsOf(harness: LoopHarness): Row[] {
  const db = new Database(stateDbPath(harness.home), { readonly: true });
  try {
    return db.prepare("SELECT role, tokens, token_basis FROM messages ORDER BY seq").all() as Row[];
  } finally {
    db.close();
  }
}

describe("stored token counts in the product turn", () => {
  it("rows written after the tokenizer has loaded carry the exact count the estimator gives their messages", async () => {
    const gate = gateTool("lookup");
    gate.release("42 apples");
    h = await createHarness({ tools: [gate.tool] });
    // The first turn's tool call starts loading the tokenizer; the second turn is written with counts.
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "lookup", arguments: { q: "apples" } }] }, { text: "You have 42 apples." });
    await h.send("how many apples?");
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    // Its user message was saved before anything loaded the tokenizer.
    expect(rowsOf(h)[0]).toMatchObject({ role: "user", tokens: null, token_basis: null });
    await sharedTokenEstimator("custom/test-model").load();
    h.fake.enqueue({ toolCalls: [{ id: "c2", name: "lookup", arguments: { q: "pears" } }] }, { text: "And 7 pears." });
    await h.send("and pears?");
    await waitFor(() => finalMessages(h!.outbound).length === 2);
    h.fake.assertDone();

    const secondTurn = rowsOf(h).slice(4);
    expect(secondTurn.map((r) => r.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    for (const row of secondTurn) expect(row).toMatchObject({ token_basis: "cl100k_base#1", tokens: expect.any(Number) });

    const estimator = createTokenEstimator({ model: "custom/test-model" });
    await estimator.load();
    const history = (await h.runtime.store().loadMessages("telegram:42")).slice(4);
    expect(secondTurn.map((r) => r.tokens)).toEqual(history.map((m) => estimator.message(m)));
  });
});
