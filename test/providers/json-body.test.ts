/**
 * Request bodies are encoded with their tool lists from cached bytes: the output must be exactly
 * JSON.stringify's and the cache must follow changed tools. (requests.test.ts checks the bodies
 * as the fake server receives them.)
 */
import { describe, expect, it } from "vitest";
import { JsonItems, JsonList, encodeJsonBody, stableWireForm } from "../../src/providers/json-body.js";
import { buildChatBody } from "../../src/providers/chat.js";
import { buildAnthropicBody } from "../../src/providers/anthropic.js";
import { ToolRegistry, fixToolSchema } from "../../src/engine/index.js";
import type { ToolDefinition } from "../../src/core/llm.js";
import { assistantMessage, toolMessage, userMessage } from "../../src/core/index.js";
import type { Message } from "../../src/core/index.js";
import type { Tool } from "../../src/tools/tool.js";

const text = (body: Record<string, unknown>): string => Buffer.concat(encodeJsonBody(body).chunks).toString("utf8");

const schema = { type: "object", properties: { path: { type: "string", description: "where — ünïcödé" } }, required: ["path"] };
const tool = (name: string, description = `${name} things`, parameters: Record<string, unknown> = schema): Tool => ({
  name,
  description,
  parameters,
  execute: async () => "ok",
});

describe("encodeJsonBody", () => {
  it("gives JSON.stringify's bytes, with lists anywhere in the body and values JSON leaves out", () => {
    const items = [{ a: 1 }, { b: "ü" }];
    const bodies: Record<string, unknown>[] = [
      {},
      { tools: new JsonList(items) },
      { model: "m", tools: new JsonList(items), stream: true, skipped: undefined, fn: () => 1 },
      { messages: [{ role: "user", content: "say \"hi\"\n" }], tools: new JsonList([]), nested: { list: new JsonList(items) } },
    ];
    for (const body of bodies) {
      const encoded = encodeJsonBody(body);
      expect(Buffer.concat(encoded.chunks).toString("utf8")).toBe(JSON.stringify(body));
      expect(encoded.byteLength).toBe(Buffer.byteLength(JSON.stringify(body)));
    }
  });

  it("sends the same list bytes while the items are the same objects, and new bytes when one changes", () => {
    const a = { name: "a" };
    const b = { name: "b" };
    const list = (encoded: ReturnType<typeof encodeJsonBody>) => encoded.chunks[1];
    const first = list(encodeJsonBody({ tools: new JsonList([a, b]) }));
    expect(list(encodeJsonBody({ tools: new JsonList([a, b]) }))).toBe(first);
    const c = { name: "c" };
    expect(text({ tools: new JsonList([a, c]) })).toBe('{"tools":[{"name":"a"},{"name":"c"}]}');
    expect(list(encodeJsonBody({ tools: new JsonList([b, a]) }))).not.toBe(first);
  });

  it("keeps a wire form per source object and format", () => {
    const source = {};
    const one = stableWireForm("chat", source, () => ({ n: 1 }));
    expect(stableWireForm("chat", source, () => ({ n: 2 }))).toBe(one);
    expect(stableWireForm("responses", source, () => ({ n: 3 }))).toEqual({ n: 3 });
  });
});

describe("stable tool definitions across runs", () => {
  it("fixToolSchema returns one repaired copy per schema object and never touches the input", () => {
    const input = { properties: { a: { type: "string" } }, required: ["a", "missing"] };
    const fixed = fixToolSchema(input);
    expect(fixToolSchema(input)).toBe(fixed);
    expect(fixed).toEqual({ type: "object", properties: { a: { type: "string" } }, required: ["a"] });
    expect(input.required).toEqual(["a", "missing"]);
  });

  it("registries built each turn share definitions; a changed description makes a new one", () => {
    const read = tool("read");
    const first = new ToolRegistry([read, tool("spawn")]).definitions();
    // Turn-bound tools are new objects every turn around the same schema.
    const second = new ToolRegistry([read, tool("spawn")]).definitions();
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
    const changed = new ToolRegistry([read, tool("spawn", "spawn other things")]).definitions();
    expect(changed[1]).not.toBe(first[1]);
    expect(changed[1]!.description).toBe("spawn other things");
  });
});

describe("adapter bodies with cached tool lists", () => {
  const target = { provider: "custom", model: "m", baseURL: "http://127.0.0.1:1/v1" } as never;
  const definitions: ToolDefinition[] = new ToolRegistry([tool("read"), tool("write")]).definitions();

  it("Chat Completions: the tools serialise as OpenAI's function tools", () => {
    const body = buildChatBody(target, { messages: [userMessage("hi")], tools: definitions });
    const parsed = JSON.parse(text(body)) as { tools: unknown[] };
    expect(parsed.tools).toEqual([
      { type: "function", function: { name: "read", description: "read things", parameters: definitions[0]!.parameters } },
      { type: "function", function: { name: "write", description: "write things", parameters: definitions[1]!.parameters } },
    ]);
    expect(text(body)).toBe(JSON.stringify(body));
  });

  it("Anthropic: the cache breakpoint is on the last tool only, and the shared forms stay clean", () => {
    const parse = () => JSON.parse(text(buildAnthropicBody(target, { messages: [userMessage("hi")], tools: definitions }))) as { tools: Record<string, unknown>[] };
    const once = parse();
    expect(once.tools[0]).not.toHaveProperty("cache_control");
    expect(once.tools[1]).toMatchObject({ name: "write", cache_control: { type: "ephemeral" } });
    // Reordered: the former last tool now goes without the breakpoint.
    const reordered = JSON.parse(
      text(buildAnthropicBody(target, { messages: [userMessage("hi")], tools: [definitions[1]!, definitions[0]!] })),
    ) as { tools: Record<string, unknown>[] };
    expect(reordered.tools[0]).toEqual({ name: "write", description: "write things", input_schema: definitions[1]!.parameters });
    expect(reordered.tools[1]).toMatchObject({ name: "read", cache_control: { type: "ephemeral" } });
    expect(parse()).toEqual(once);
  });
});

describe("conversation messages from cached bytes (JsonItems)", () => {
  const target = { provider: "custom", model: "m", baseURL: "http://127.0.0.1:1/v1" } as never;

  it("gives JSON.stringify's bytes whichever items are stable, with non-ASCII text", () => {
    const lists: object[][] = [[], [{ a: 1 }], [{ a: "ü — ✓" }, { b: [1, 2] }, { c: null }, { d: "x".repeat(3000) }]];
    for (const items of lists) {
      for (const isStable of [() => false, () => true, (item: object) => "b" in item || "d" in item]) {
        const body = { model: "m", messages: new JsonItems(items, isStable), stream: true };
        expect(text(body)).toBe(JSON.stringify(body));
        expect(encodeJsonBody(body).byteLength).toBe(Buffer.byteLength(JSON.stringify(body)));
      }
    }
  });

  it("sends a stable item as the same bytes on every call", () => {
    const kept = { big: "y".repeat(2000) };
    const first = encodeJsonBody({ messages: new JsonItems([{ a: 1 }, kept], (i) => i === kept) }).chunks;
    const second = encodeJsonBody({ messages: new JsonItems([{ a: 2 }, kept, { b: 3 }], (i) => i === kept) }).chunks;
    expect(first.find((c) => c.length === JSON.stringify(kept).length)).toBe(second.find((c) => c.length === JSON.stringify(kept).length));
  });

  it("a long message keeps its wire form across calls; an edited copy is serialised afresh", () => {
    const longResult = `notes: ${"the deployment steps. ".repeat(100)}`;
    const history: Message[] = [
      userMessage("what is in notes.md?"),
      assistantMessage("", [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "notes.md" }, rawArguments: '{"path":"notes.md"}' }]),
      toolMessage("c1", "read", longResult),
      assistantMessage("It lists the deployment steps."),
    ];
    const first = buildChatBody(target, { messages: history });
    const second = buildChatBody(target, { messages: [...history, userMessage("and the rollback?")] });
    expect(text(first)).toBe(JSON.stringify(first));
    expect(text(second)).toBe(JSON.stringify(second));
    const wire = (body: Record<string, unknown>) => (body.messages as JsonItems).items;
    expect(wire(second)[2]).toBe(wire(first)[2]);
    expect(wire(second)[2]).toEqual({ role: "tool", tool_call_id: "c1", content: longResult });
    const edited = { ...history[2]!, content: [{ type: "text" as const, text: `${longResult} And the rollback plan.` }] } as Message;
    const third = buildChatBody(target, { messages: [...history.slice(0, 2), edited, history[3]!] });
    expect(wire(third)[2]).not.toBe(wire(first)[2]);
    expect((JSON.parse(text(third)) as { messages: { content: string }[] }).messages[2]!.content).toBe(`${longResult} And the rollback plan.`);
  });
});
