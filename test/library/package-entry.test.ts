import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

describe("nanobot as a library", () => {
  it("the package entry (built dist/) runs an agent with a custom tool, as the README shows", async () => {
    // Imported by package name: resolves through package.json "exports" to dist/index.js.
    const nb = await import("nanobot");
    const model = nb.createProviderRegistry({ providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-lib" } } }).resolveModel("custom/m");
    const add = {
      name: "add",
      description: "adds two numbers",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      readOnly: true,
      execute: async (args: Record<string, unknown>) => String(Number(args.a) + Number(args.b)),
    };
    fake.enqueue({ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "2 + 3 = 5" });
    const stream = nb.runAgent({ model, messages: [nb.userMessage("add 2 and 3")], tools: [add] });
    const deltas: string[] = [];
    for await (const event of stream) if (event.type === "text_delta") deltas.push(event.delta);
    const result = await stream.result();
    expect(result.content).toBe("2 + 3 = 5");
    expect(deltas.join("")).toBe("2 + 3 = 5");
    expect(result.toolsUsed).toEqual(["add"]);
    expect(JSON.stringify(fake.requests[1]?.body.messages)).toContain('"content":"5"');
    fake.assertDone();
  });
});
