import { describe, expect, it } from "vitest";
import { assistantMessage, systemMessage, textOf, toolMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message, ToolCallPart } from "../../src/core/messages.js";
import { CONTINUED_TEXT, UNAVAILABLE_RESULT, governContext, type TokenEstimator } from "../../src/engine/index.js";
import { offloadLargeResults, type PendingWrite } from "../../src/engine/governance/offload.js";
import { backfillMissingResults, dropMalformed, dropOrphanResults, normalizeEmptyResults } from "../../src/engine/governance/sanitize.js";
import { snipHistory } from "../../src/engine/governance/snip.js";
import { uniqueCallIds } from "../../src/engine/governance/unique-call-ids.js";

const call = (id: string, name = "exec"): ToolCallPart => ({ type: "toolCall", id, name, arguments: {}, rawArguments: "{}" });
/** One token per character of text: easy budgets to reason about. */
const charEstimator: TokenEstimator = {
  load: async () => undefined,
  ready: true,
  text: (t) => t.length,
  message: (m) => textOf(m).length,
  tools: () => 0,
  basis: "chars#1",
  exact: () => undefined,
};
const texts = (messages: readonly Message[]): string[] => messages.map((m) => `${m.role}:${textOf(m)}`);

describe("dropMalformed", () => {
  it("drops blank assistant messages and nameless tool calls", () => {
    const nameless = { ...call("x"), name: "" };
    const input: Message[] = [userMessage("u"), assistantMessage("  "), assistantMessage("", [nameless]), assistantMessage("ok", [nameless, call("y")])];
    const out = dropMalformed(input);
    expect(out).toHaveLength(2);
    expect((out[1]?.content ?? []).map((p) => (p.type === "toolCall" ? p.id : p.type))).toEqual(["text", "y"]);
  });
});

describe("dropOrphanResults and backfillMissingResults", () => {
  it("keeps results only in the block after their call, once, and fills gaps", () => {
    const input: Message[] = [
      userMessage("u"),
      toolMessage("early", "exec", "before any call"),
      assistantMessage("", [call("a"), call("b")]),
      toolMessage("b", "exec", "B"),
      toolMessage("b", "exec", "B again"),
      userMessage("later"),
      toolMessage("a", "exec", "too late"),
    ];
    const out = backfillMissingResults(dropOrphanResults(input));
    expect(texts(out)).toEqual(["user:u", "assistant:", "tool:B", `tool:${UNAVAILABLE_RESULT}`, "user:later"]);
    expect(input).toHaveLength(7);
  });
});

describe("normalizeEmptyResults", () => {
  it("names the tool that printed nothing", () => {
    const out = normalizeEmptyResults([toolMessage("a", "exec", "  ")]);
    expect(textOf(out[0]!)).toBe("(exec completed with no output)");
  });
});

describe("offloadLargeResults", () => {
  it("keeps a 1,200-character preview and the path, except for read_file", () => {
    const big = "a".repeat(20_000);
    const writes: PendingWrite[] = [];
    const input = [toolMessage("c1", "exec", big), toolMessage("c2", "read_file", big), toolMessage("c3", "exec", "small")];
    const { messages, offloaded } = offloadLargeResults(input, 16_000, "/out", writes);
    expect(offloaded).toBe(1);
    expect(writes).toEqual([{ path: "/out/tool-results/exec-c1.txt", content: big }]);
    const preview = textOf(messages[0]!);
    expect(preview.startsWith("a".repeat(1_200) + "\n")).toBe(true);
    expect(preview).not.toContain("a".repeat(1_201));
    expect(preview).toContain("/out/tool-results/exec-c1.txt");
    expect(messages[1]).toBe(input[1]);
    expect(messages[2]).toBe(input[2]);
  });

  it("keeps 16,000 characters exactly", () => {
    const input = [toolMessage("c1", "exec", "b".repeat(16_000))];
    expect(offloadLargeResults(input, 16_000, "/out", []).offloaded).toBe(0);
  });
});

describe("snipHistory", () => {
  it("cuts at a user turn and keeps system messages", () => {
    const input: Message[] = [systemMessage("S"), userMessage("u1-xxxx"), assistantMessage("a1-xxxx"), userMessage("u2"), assistantMessage("a2")];
    const tokens = input.map((m) => textOf(m).length);
    const { messages, snipped } = snipHistory(input, tokens, 10);
    expect(snipped).toBe(2);
    expect(texts(messages)).toEqual(["system:S", "user:u2", "assistant:a2"]);
  });

  it("inserts (conversation continued) when the kept part starts with an assistant round", () => {
    const input: Message[] = [userMessage("question-long"), assistantMessage("r1-long", [call("a")]), toolMessage("a", "exec", "A"), assistantMessage("r2")];
    const tokens = input.map((m) => textOf(m).length);
    const { messages } = snipHistory(input, tokens, 3);
    expect(texts(messages)).toEqual([`user:${CONTINUED_TEXT}`, "assistant:r2"]);
  });

  it("never starts on a tool result", () => {
    const input: Message[] = [userMessage("q"), assistantMessage("", [call("a"), call("b")]), toolMessage("a", "exec", "AAAA"), toolMessage("b", "exec", "B")];
    const tokens = input.map((m) => textOf(m).length);
    const { messages, snipped } = snipHistory(input, tokens, 2);
    expect(snipped).toBe(0);
    expect(messages).toHaveLength(4);
  });
});

describe("governContext", () => {
  it("leaves a legal history under budget untouched", () => {
    const input: Message[] = [systemMessage("s"), userMessage("hello"), assistantMessage("hi")];
    const { messages, stats, writes } = governContext(input, { estimator: charEstimator, budget: 100, maxToolResultChars: 16_000 });
    expect(messages).toEqual(input);
    expect(messages[1]).toBe(input[1]);
    expect(writes).toEqual([]);
    expect(stats.tokensAfter).toBe(8);
  });

  it("snips older turns when microcompaction is not enough, then repairs orphans", () => {
    const input: Message[] = [
      userMessage("old question ".repeat(5)),
      assistantMessage("old answer ".repeat(5)),
      userMessage("new"),
      assistantMessage("", [call("a", "exec")]),
      toolMessage("a", "exec", "r"),
    ];
    const { messages, stats } = governContext(input, { estimator: charEstimator, budget: 20, maxToolResultChars: 16_000 });
    expect(texts(messages)).toEqual(["user:new", "assistant:", "tool:r"]);
    expect(stats.snipped).toBe(2);
  });

  it("microcompacts oldest first and stops at 85 % of the budget", () => {
    const reads = Array.from({ length: 20 }, (_, i) => call(`r${i}`, "grep"));
    const input: Message[] = [userMessage("q"), assistantMessage("", reads), ...reads.map((c) => toolMessage(c.id, "grep", "g".repeat(600)))];
    // 20 × 600 = 12,001 with the user message; budget 11,000 → 85 % = 9,350; each stub saves ~530.
    const { messages, stats } = governContext(input, { estimator: charEstimator, budget: 11_000, maxToolResultChars: 16_000 });
    expect(stats.microcompacted).toBe(5);
    expect(stats.tokensAfter).toBeLessThanOrEqual(9_350);
    const flags = messages.filter((m) => m.role === "tool").map((m) => m.meta?.microcompacted === true);
    expect(flags).toEqual([...Array<boolean>(5).fill(true), ...Array<boolean>(15).fill(false)]);
  });

  it("never compacts the 10 newest compactable results, nor small or non-compactable ones", () => {
    const calls = [call("w", "write_file"), call("s", "grep"), ...Array.from({ length: 10 }, (_, i) => call(`k${i}`, "grep"))];
    const input: Message[] = [
      userMessage("q"),
      assistantMessage("", calls),
      toolMessage("w", "write_file", "w".repeat(5_000)),
      toolMessage("s", "grep", "tiny"),
      ...calls.slice(2).map((c) => toolMessage(c.id, "grep", "g".repeat(600))),
    ];
    const { stats } = governContext(input, { estimator: charEstimator, budget: 100_000_000, maxToolResultChars: 16_000 });
    expect(stats.microcompacted).toBe(0);
    const tight = governContext(input, { estimator: charEstimator, budget: 5_000, maxToolResultChars: 16_000 });
    expect(tight.stats.microcompacted).toBe(0);
  });

  it("uses the budget given (contextBlockLimit) and the provider adjustment", () => {
    const input: Message[] = [userMessage("0123456789")];
    const { stats } = governContext(input, { estimator: charEstimator, budget: 1_000, maxToolResultChars: 16_000, adjustment: 5, toolTokens: 7 });
    expect(stats.tokensAfter).toBe(22);
  });
});

describe("uniqueCallIds", () => {
  /** The rule, stated plainly: each repeat takes the smallest `<id>_<n>` (n ≥ 2) not yet used. */
  const expectedIds = (messages: readonly Message[]): string[] => {
    const used = new Set<string>();
    const out: string[] = [];
    for (const m of messages) {
      if (m.role !== "assistant") continue;
      for (const p of m.content) {
        if (p.type !== "toolCall") continue;
        let id = p.id;
        for (let n = 2; used.has(id); n++) id = `${p.id}_${n}`;
        used.add(id);
        out.push(id);
      }
    }
    return out;
  };

  it("gives every repeat of a per-response id (`call_0` on every answer) the smallest free suffix, and its results follow", () => {
    const history: Message[] = [userMessage("go"), assistantMessage("", [call("call_0_3")]), toolMessage("call_0_3", "exec", "literal")];
    for (let r = 0; r < 60; r++) {
      // Two calls per answer, the second a repeat within the answer too.
      history.push(assistantMessage("", [call("call_0"), call("call_0")]), toolMessage("call_0", "exec", `r${r}a`), toolMessage("call_0", "exec", `r${r}b`));
    }
    const out = uniqueCallIds(history);
    const calls = out.flatMap((m) => (m.role === "assistant" ? m.content.flatMap((p) => (p.type === "toolCall" ? [p.id] : [])) : []));
    expect(calls).toEqual(expectedIds(history));
    expect(new Set(calls).size).toBe(calls.length);
    expect(calls.slice(0, 6)).toEqual(["call_0_3", "call_0", "call_0_2", "call_0_4", "call_0_5", "call_0_6"]);
    // Each result answers the call made in its place: the n-th result of an answer, its n-th call.
    out.forEach((m, i) => {
      if (m.role !== "assistant" || i === 1) return;
      const ids = m.content.flatMap((p) => (p.type === "toolCall" ? [p.id] : []));
      expect([out[i + 1], out[i + 2]].map((t) => (t?.role === "tool" ? t.toolCallId : ""))).toEqual(ids);
    });
    // The stored messages are not touched.
    expect(history[3]).toMatchObject({ content: [{ id: "call_0" }, { id: "call_0" }] });
  });

  it("hands back the same array when every id is already unique", () => {
    const history: Message[] = [userMessage("go"), assistantMessage("", [call("a"), call("b")]), toolMessage("a", "exec", "1"), toolMessage("b", "exec", "2")];
    expect(uniqueCallIds(history)).toBe(history);
  });
});
