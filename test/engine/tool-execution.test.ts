import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { textOf, userMessage } from "../../src/core/message-helpers.js";
import type { ToolMessage } from "../../src/core/messages.js";
import { ERROR_HINT, runAgent } from "../../src/engine/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { collect, makeModel, tempDir, textTool, wireMessages } from "./helpers/harness.js";

let fake: FakeLLM;
let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  fake = await startFakeLLM();
  dir = await tempDir();
});
afterEach(async () => {
  await fake.close();
  await dir.cleanup();
});

const toolResults = (messages: readonly { role: string }[]): ToolMessage[] => messages.filter((m): m is ToolMessage => m.role === "tool");
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("batching: concurrency-safe neighbours run together", () => {
  it("starts both reads before either ends and the write after both", async () => {
    const log: string[] = [];
    const traced = (name: string, readOnly: boolean) =>
      textTool(
        name,
        async () => {
          log.push(`start ${name}`);
          await tick();
          await tick();
          log.push(`end ${name}`);
          return `${name} ok`;
        },
        { readOnly },
      );
    fake.enqueue(
      { toolCalls: [{ name: "read_a", arguments: {} }, { name: "read_b", arguments: {} }, { name: "write_a", arguments: {} }] },
      { text: "done" },
    );
    const { result } = await collect(
      runAgent({ model: makeModel(fake), messages: [userMessage("go")], tools: [traced("read_a", true), traced("read_b", true), traced("write_a", false)] }),
    );
    expect(log.slice(0, 2).sort()).toEqual(["start read_a", "start read_b"]);
    expect(log.slice(2, 4).sort()).toEqual(["end read_a", "end read_b"]);
    expect(log.slice(4)).toEqual(["start write_a", "end write_a"]);
    // Results stay in call order.
    expect(toolResults(result.newMessages).map((m) => m.toolName)).toEqual(["read_a", "read_b", "write_a"]);
  });
});

describe("unknown tool with a near miss", () => {
  it("does not execute readFile and names read_file in the error", async () => {
    let executed = 0;
    const tool = textTool("read_file", () => `read ${++executed}`, { readOnly: true });
    fake.enqueue({ toolCalls: [{ name: "readFile", arguments: { path: "a.txt" } }] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("read")], tools: [tool] }));
    expect(executed).toBe(0);
    const [error] = toolResults(result.newMessages);
    expect(error?.isError).toBe(true);
    expect(textOf(error!)).toBe("Error: Tool 'readFile' not found. Did you mean 'read_file'?");
  });
});

describe("repeated web_fetch of one URL in a turn", () => {
  it("blocks the third identical call", async () => {
    let fetches = 0;
    const webFetch = textTool("web_fetch", () => `page ${++fetches}`, {
      readOnly: true,
      parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
    });
    const call = { name: "web_fetch", arguments: { url: "https://example.com/a" } };
    fake.enqueue({ toolCalls: [call] }, { toolCalls: [call] }, { toolCalls: [call] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("fetch")], tools: [webFetch] }));
    expect(fetches).toBe(2);
    const results = toolResults(result.newMessages);
    expect(results.map((m) => m.isError)).toEqual([false, false, true]);
    expect(textOf(results[2]!)).toContain("blocked");
  });
});

describe("output over 50 KiB is saved and truncated", () => {
  const dump = (payload: () => ToolMessage["content"]) =>
    textTool("dump", () => ({ content: payload() }), { readOnly: true });

  it("writes 51,200 + 1,000 bytes of text to a .txt file and leaves the pointer", async () => {
    const text = "x".repeat(51_200 + 1_000);
    fake.enqueue({ toolCalls: [{ id: "call_big", name: "dump", arguments: {} }] }, { text: "ok" });
    const { result } = await collect(
      runAgent({ model: makeModel(fake), messages: [userMessage("dump")], tools: [dump(() => [{ type: "text", text }])], outputDir: dir.path }),
    );
    const path = `${dir.path}/truncated-outputs/dump-call_big.txt`;
    expect(await readFile(path, "utf8")).toBe(text);
    const [message] = toolResults(result.newMessages);
    expect(textOf(message!)).toContain(path);
    expect(textOf(message!).length).toBeLessThan(text.length);
    // The model sees the pointer too.
    expect(String(wireMessages(fake.requests[1]).at(-1)?.content)).toContain(path);
  });

  it("leaves exactly 51,200 bytes unchanged", async () => {
    const text = "y".repeat(51_200);
    fake.enqueue({ toolCalls: [{ id: "call_edge", name: "dump", arguments: {} }] }, { text: "ok" });
    const { result } = await collect(
      runAgent({ model: makeModel(fake), messages: [userMessage("dump")], tools: [dump(() => [{ type: "text", text }])], outputDir: dir.path }),
    );
    expect(textOf(toolResults(result.newMessages)[0]!)).toBe(text);
  });

  it("saves text + image output as .json", async () => {
    const text = "z".repeat(52_200);
    const image = { type: "image" as const, mimeType: "image/png", data: "iVBORw0KGgo=" };
    fake.enqueue({ toolCalls: [{ id: "call_mixed", name: "dump", arguments: {} }] }, { text: "ok" });
    await collect(
      runAgent({ model: makeModel(fake), messages: [userMessage("dump")], tools: [dump(() => [{ type: "text", text }, image])], outputDir: dir.path }),
    );
    const saved = JSON.parse(await readFile(`${dir.path}/truncated-outputs/dump-call_mixed.json`, "utf8")) as unknown[];
    expect(saved).toEqual([{ type: "text", text }, image]);
  });

  it("honours skipTruncation", async () => {
    const text = "s".repeat(60_000);
    const tool = textTool("dump", () => ({ content: [{ type: "text", text }], skipTruncation: true }));
    fake.enqueue({ toolCalls: [{ name: "dump", arguments: {} }] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("dump")], tools: [tool], outputDir: dir.path }));
    expect(textOf(toolResults(result.newMessages)[0]!)).toBe(text);
  });
});

describe("argument validation", () => {
  it("returns schema errors to the model instead of executing", async () => {
    let executed = false;
    const tool = textTool("read_file", () => ((executed = true), "x"), {
      parameters: { type: "object", properties: { path: { type: "string" }, limit: { type: "integer", minimum: 1 } }, required: ["path"] },
    });
    fake.enqueue({ toolCalls: [{ name: "read_file", arguments: { limit: 0 } }] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("r")], tools: [tool] }));
    expect(executed).toBe(false);
    const text = textOf(toolResults(result.newMessages)[0]!);
    expect(text).toContain("path: required property is missing");
    expect(text).toContain("limit: must be >= 1");
  });

  it("turns arguments that are not a JSON object into an error result", async () => {
    let executed = false;
    const tool = textTool("echo", () => ((executed = true), "x"));
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: "[1, 2]" }] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("r")], tools: [tool] }));
    const message = toolResults(result.newMessages)[0]!;
    expect(executed).toBe(false);
    expect(message.isError).toBe(true);
    expect(textOf(message)).toBe("Error: unusable arguments for 'echo': tool arguments must be a JSON object. Send the call again with a valid JSON object.");
  });
});

describe("failures become error results", () => {
  it("adds the retry hint to a thrown error", async () => {
    const tool = textTool("boom", () => {
      throw new Error("disk on fire");
    });
    fake.enqueue({ toolCalls: [{ name: "boom", arguments: {} }] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("r")], tools: [tool] }));
    const message = toolResults(result.newMessages)[0]!;
    expect(message.isError).toBe(true);
    expect(textOf(message)).toBe(`Error: disk on fire\n\n${ERROR_HINT}`);
    expect(result.stopReason).toBe("completed");
  });

  it("times out a tool with a ToolTimeoutError result", async () => {
    const tool = textTool("hang", () => new Promise<string>(() => undefined), { timeoutMs: 5 });
    fake.enqueue({ toolCalls: [{ name: "hang", arguments: {} }] }, { text: "ok" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("r")], tools: [tool] }));
    expect(textOf(toolResults(result.newMessages)[0]!)).toMatch(/^Error: Tool 'hang' timed out/);
  });
});

describe("external tools", () => {
  it("end the run with external_tool and hand back the calls", async () => {
    const tool = textTool("ask_user", () => "never", { external: true });
    fake.enqueue({ toolCalls: [{ id: "call_ext", name: "ask_user", arguments: {} }] });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("r")], tools: [tool] }));
    expect(result.stopReason).toBe("external_tool");
    expect(result.externalToolCalls?.map((c) => c.id)).toEqual(["call_ext"]);
    fake.assertDone();
  });
});
