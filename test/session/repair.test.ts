import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assistantMessage, toolMessage, userMessage } from "../../src/core/index.js";
import type { Message } from "../../src/core/index.js";
import { historyProblems, sanitizeToolResults, unansweredToolCalls } from "../../src/session/index.js";
import { call } from "./helpers/temp-store.js";

/** Random histories over a small id space, so duplicates and orphans are common. */
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  fc.constant(null).map(() => userMessage("u")),
  fc.uniqueArray(fc.constantFrom("a", "b", "c"), { maxLength: 3 }).map((ids) => assistantMessage("", ids.map((id) => call(id, "t")))),
  fc.constantFrom("a", "b", "c", "zz").map((id) => toolMessage(id, "t", "r")),
);

describe("sanitizeToolResults", () => {
  it("never keeps an undeclared or duplicate result, and keeps every non-tool message", () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 30 }), (messages) => {
        const { kept, dropped } = sanitizeToolResults(messages);
        const problems = historyProblems(kept).filter((p) => !p.includes("unanswered"));
        expect(problems).toEqual([]);
        expect(kept.length + dropped.length).toBe(messages.length);
        expect(kept.filter((m) => m.role !== "tool")).toEqual(messages.filter((m) => m.role !== "tool"));
      }),
    );
  });

  it("accepts results for calls left open before the batch", () => {
    const { kept } = sanitizeToolResults([toolMessage("x", "t", "late"), toolMessage("y", "t", "?")], ["x"]);
    expect(kept.map((m) => (m.role === "tool" ? m.toolCallId : m.role))).toEqual(["x"]);
  });
});

describe("unansweredToolCalls", () => {
  it("lists the calls of the trailing block without a result", () => {
    const history = [userMessage("go"), assistantMessage("", [call("a", "t"), call("b", "t")]), toolMessage("a", "t", "ok")];
    expect(unansweredToolCalls(history).map((c) => c.id)).toEqual(["b"]);
    expect(unansweredToolCalls([...history, assistantMessage("done")])).toEqual([]);
  });
});
