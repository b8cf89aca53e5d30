import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/engine/index.js";
import { userMessage } from "../../src/core/message-helpers.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { collect, makeModel } from "./helpers/harness.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

describe("what tools hand to the product layer", () => {
  it("a tool that already replied marks its result with suppressFinalReply, and tools see the turn id", async () => {
    const contexts: ToolContext[] = [];
    const tool = {
      name: "message",
      description: "send",
      parameters: { type: "object", properties: { content: { type: "string" } } },
      execute: async (_args: Record<string, unknown>, ctx: ToolContext) => {
        contexts.push(ctx);
        return { content: [{ type: "text" as const, text: "sent" }], suppressFinalReply: true };
      },
    };
    fake.enqueue({ toolCalls: [{ name: "message", arguments: { content: "hi" } }] }, { text: "done" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("say hi")], tools: [tool] }));
    const toolMsg = result.newMessages.find((m) => m.role === "tool");
    expect(toolMsg?.meta).toEqual({ suppressFinalReply: true });
    expect(contexts[0]?.turnId).toMatch(/^run_/);
    fake.assertDone();
  });
});
