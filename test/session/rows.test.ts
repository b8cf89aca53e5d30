/**
 * Messages survive the trip through a `messages` row unchanged — every field, the key order of
 * the object (JSON exports compare text), and tool calls kept in place when they are interleaved.
 */
import { describe, expect, it } from "vitest";
import type { AssistantMessage, Message } from "../../src/core/index.js";
import { messageToRow, rowFromRaw, rowToMessage } from "../../src/session/rows.js";
import type { RawMessageRow } from "../../src/session/rows.js";

const call = { type: "toolCall" as const, id: "c1", name: "read", arguments: { path: "a.md" }, rawArguments: '{"path":"a.md"}' };
const messages: Message[] = [
  { id: "m1", createdAt: 1, role: "system", content: [{ type: "text", text: "be brief" }] },
  { id: "m2", createdAt: 2, meta: { synthetic: true }, role: "user", content: [{ type: "text", text: "hi — ü" }] },
  {
    id: "m3",
    createdAt: 3,
    role: "assistant",
    content: [{ type: "reasoning", text: "think" }, { type: "text", text: "reading" }, call],
    usage: { promptTokens: 10, completionTokens: 2 },
    provider: "openai",
    model: "gpt-x",
    finishReason: "tool_calls",
  } as AssistantMessage,
  { id: "m4", createdAt: 4, role: "tool", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "file" }], isError: true },
  { id: "m5", createdAt: 5, meta: { summary: true }, role: "assistant", content: [call, { type: "text", text: "after the call" }] },
  { id: "m6", createdAt: 6, role: "assistant", content: [{ type: "text", text: "plain" }] },
];

describe("message rows", () => {
  it.each(messages.map((m) => [m.id, m] as const))("%s comes back equal, with the same key order", (_, message) => {
    const back = rowToMessage(messageToRow(message, "t1", 1, null));
    expect(back).toEqual(message);
    expect(JSON.stringify(back)).toBe(JSON.stringify(message));
  });

  it("a raw row (column order) reads as the named row", () => {
    const row = messageToRow(messages[2]!, "t1", 7, "turn-1");
    const raw = Object.values(row) as RawMessageRow;
    expect(rowFromRaw(raw)).toEqual(row);
  });
});
