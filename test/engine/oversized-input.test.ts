import { describe, expect, it } from "vitest";
import type { UserContentPart } from "../../src/core/messages.js";
import { inputTokenLimit, limitUserInput, mayExceedInputLimit, truncationNotice } from "../../src/engine/governance/oversized-input.js";
import { createTokenEstimator } from "../../src/engine/tokens/estimator.js";
import type { TokenEstimator } from "../../src/engine/tokens/estimator.js";

/** One token per character: limits that are easy to reason about. */
const perChar: TokenEstimator = { load: async () => undefined, ready: true, text: (t) => t.length, message: () => 0, tools: () => 0, basis: "chars#1", exact: () => undefined };
/** A window whose per-message limit is exactly 1,000 tokens: (3,024 − 0 − 1,024) × 0.5. */
const small = { estimator: perChar, contextWindow: 3_024, maxTokens: 0 };
const MARKER = /\n\n\[… ([\d,]+) characters removed here: the message was too long for the context window\.( The full message is saved at (\S+)\.)? …\]\n\n/;

function split(text: string): { head: string; removed: number; tail: string; savedAt?: string } {
  const match = MARKER.exec(text);
  if (!match) throw new Error("no marker");
  return { head: text.slice(0, match.index), removed: Number(match[1]!.replace(/,/g, "")), tail: text.slice(match.index + match[0].length), savedAt: match[3] };
}

describe("the oversized-input rule", () => {
  it("allows half of the prompt budget, and anything when the window is unknown", () => {
    expect(inputTokenLimit(200_000, 8_192)).toBe(Math.floor((200_000 - 8_192 - 1_024) / 2));
    expect(inputTokenLimit(3_024, 0)).toBe(1_000);
    expect(inputTokenLimit(0, 8_192)).toBe(Infinity);
    const huge = "x".repeat(100_000);
    expect(limitUserInput(huge, { ...small, contextWindow: 0 })).toEqual({ content: huge });
    // Without counting: 250 characters can never exceed 1,000 tokens (≤ 4 tokens a character).
    expect(mayExceedInputLimit("y".repeat(250), 3_024, 0)).toBe(false);
    expect(mayExceedInputLimit("y".repeat(251), 3_024, 0)).toBe(true);
  });

  it("leaves a message that fits untouched (the same content, no truncation)", () => {
    const content = "y".repeat(1_000);
    const out = limitUserInput(content, small);
    expect(out.content).toBe(content);
    expect(out.truncation).toBeUndefined();
  });

  it("cuts an oversized message to its head and tail around a marker that counts what was removed", () => {
    const text = `START ${"a".repeat(5_000)}${"b".repeat(5_000)} END?`;
    const out = limitUserInput(text, { ...small, savedAt: "/home/u/.nanobot/sessions/x/inputs/1.txt" });
    const cut = out.content as string;
    expect(perChar.text(cut)).toBeLessThanOrEqual(1_000);
    const parts = split(cut);
    expect(parts.head.startsWith("START aaa")).toBe(true);
    expect(parts.tail.endsWith("bbb END?")).toBe(true);
    expect(parts.head.length + parts.removed + parts.tail.length).toBe(text.length);
    expect(parts.savedAt).toBe("/home/u/.nanobot/sessions/x/inputs/1.txt");
    expect(out.truncation).toEqual({ originalChars: text.length, removedChars: parts.removed, originalTokens: text.length, limitTokens: 1_000 });
    expect(truncationNotice(out.truncation!)).toBe(
      `Your message was too long for the model (about 10,011 tokens; one message may use 1,000), so ${parts.removed.toLocaleString("en-US")} of its 10,011 characters were left out from the middle; the beginning and the end were kept.`,
    );
  });

  it("fits with the real tokenizer too, whatever the text's characters per token", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    const options = { estimator, contextWindow: 20_000, maxTokens: 2_000 };
    const limit = inputTokenLimit(20_000, 2_000);
    for (const text of ["lorem ipsum dolor sit amet ".repeat(20_000), "日本語のテキスト".repeat(20_000), "😀🚀".repeat(30_000), "0123456789".repeat(50_000)]) {
      const out = limitUserInput(text, options);
      expect(out.truncation, text.slice(0, 10)).toBeDefined();
      expect(estimator.text(out.content as string), text.slice(0, 10)).toBeLessThanOrEqual(limit);
      // Well used: the kept text is not a sliver of what was allowed.
      expect(estimator.text(out.content as string), text.slice(0, 10)).toBeGreaterThan(limit * 0.5);
      // No half of a surrogate pair at either edge of the cut.
      expect(() => encodeURIComponent(out.content as string)).not.toThrow();
    }
  });

  it("cuts the text parts of a multi-part message and keeps its images", () => {
    const content: UserContentPart[] = [
      { type: "text", text: `Q1 ${"c".repeat(6_000)}` },
      { type: "image", url: "https://example.com/cat.png" } as UserContentPart,
      { type: "text", text: `Q2 ${"d".repeat(3_000)} end` },
    ];
    const out = limitUserInput(content, small);
    const parts = out.content as UserContentPart[];
    expect(parts.map((p) => p.type)).toEqual(["text", "image", "text"]);
    const texts = parts.flatMap((p) => (p.type === "text" ? [p.text] : []));
    expect(texts.reduce((n, t) => n + t.length, 0)).toBeLessThanOrEqual(1_000);
    expect(texts[0]!.startsWith("Q1 ")).toBe(true);
    expect(texts[1]!.endsWith(" end")).toBe(true);
    expect(out.truncation?.removedChars).toBe(texts.reduce((n, t) => n + split(t).removed, 0));
  });
});
