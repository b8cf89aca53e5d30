import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, textOf, toolMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message, ToolCallPart } from "../../src/core/messages.js";
import { UNAVAILABLE_RESULT, runAgent } from "../../src/engine/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { collect, makeModel, tempDir, wireMessages } from "./helpers/harness.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
  fake.enqueue({ text: "ok" });
});
afterEach(async () => {
  await fake.close();
});

const call = (id: string, name = "read_file", args: Record<string, unknown> = { path: id }): ToolCallPart => ({
  type: "toolCall",
  id,
  name,
  arguments: args,
  rawArguments: JSON.stringify(args),
});

describe("microcompaction of in-flight results", () => {
  it("replaces the 8 oldest of 18 read_file results and keeps the 10 newest (window 2224, maxTokens 0)", async () => {
    // ~80 tokens and > 500 characters each (o200k: " information" is one token).
    const body = (n: number): string => `file ${n}:` + " information".repeat(70);
    const calls = Array.from({ length: 18 }, (_, i) => call(`c${i}`, "read_file", { path: `f${i}` }));
    const messages: Message[] = [
      userMessage("read all files"),
      assistantMessage("", calls),
      ...calls.map((c, i) => toolMessage(c.id, "read_file", body(i))),
    ];
    await collect(runAgent({ model: makeModel(fake), messages, contextWindow: 2224, maxTokens: 0 }));
    const tools = wireMessages(fake.requests[0]).filter((m) => m.role === "tool");
    expect(tools).toHaveLength(18);
    const compacted = tools.map((m) => String(m.content).includes("compacted to fit context"));
    expect(compacted).toEqual([...Array<boolean>(8).fill(true), ...Array<boolean>(10).fill(false)]);
    expect(tools.slice(8).map((m) => m.content)).toEqual(calls.slice(8).map((_, i) => body(i + 8)));
    // The user message survived: nothing was snipped.
    expect(wireMessages(fake.requests[0])[0]).toEqual({ role: "user", content: "read all files" });
  });
});

describe("orphan results and missing results", () => {
  it("drops an undeclared result and backfills the missing one in the request", async () => {
    const messages: Message[] = [
      userMessage("q"),
      assistantMessage("", [call("a"), call("b")]),
      toolMessage("a", "read_file", "A"),
      toolMessage("ghost", "read_file", "orphan"),
      toolMessage("a", "read_file", "duplicate"),
    ];
    const { result } = await collect(runAgent({ model: makeModel(fake), messages }));
    const wire = wireMessages(fake.requests[0]);
    expect(wire.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "a", content: "A" },
      { role: "tool", tool_call_id: "b", content: UNAVAILABLE_RESULT },
    ]);
    // Persisted history is not touched.
    expect(messages).toHaveLength(5);
    expect(result.newMessages.every((m) => m.role === "assistant")).toBe(true);
  });
});

describe("a dangling tool call from a previous round", () => {
  it("reaches the provider only with a result right after it", async () => {
    const messages: Message[] = [
      userMessage("first"),
      assistantMessage("let me look", [call("lost", "exec", { command: "ls" })]),
      userMessage("second"),
    ];
    await collect(runAgent({ model: makeModel(fake), messages }));
    const wire = wireMessages(fake.requests[0]);
    expect(wire.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(wire[2]).toEqual({ role: "tool", tool_call_id: "lost", content: UNAVAILABLE_RESULT });
  });
});

describe("placeholder assistant messages", () => {
  it("are not sent", async () => {
    const messages: Message[] = [userMessage("a"), assistantMessage(""), userMessage("b")];
    await collect(runAgent({ model: makeModel(fake), messages }));
    // Without the placeholder the two user turns meet, and become one (roles alternate).
    expect(wireMessages(fake.requests[0]).map((m) => m.content)).toEqual(["a\n\nb"]);
  });
});

describe("offloading results over maxToolResultChars", () => {
  it("sends a 1,200-character preview with the path and saves the full text", async () => {
    const dir = await tempDir();
    try {
      const big = "0123456789".repeat(2_000);
      const messages: Message[] = [userMessage("q"), assistantMessage("", [call("big", "exec")]), toolMessage("big", "exec", big)];
      await collect(runAgent({ model: makeModel(fake), messages, outputDir: dir.path }));
      const sent = String(wireMessages(fake.requests[0]).at(-1)?.content);
      const path = `${dir.path}/tool-results/exec-big.txt`;
      expect(sent.startsWith(big.slice(0, 1_200))).toBe(true);
      expect(sent).toContain(path);
      expect(sent.length).toBeLessThan(1_500);
      expect(await readFile(path, "utf8")).toBe(big);
      // The history keeps the full result.
      expect(textOf(messages[2]!)).toBe(big);
    } finally {
      await dir.cleanup();
    }
  });
});
