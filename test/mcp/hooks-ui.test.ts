import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LLMRequest, ModelResponse } from "../../src/core/llm.js";
import { textOf } from "../../src/core/message-helpers.js";
import { hookMappings, parseHookKey } from "../../src/mcp/hook-keys.js";
import { hookRefs, mcpHooks, runHookChain } from "../../src/mcp/hooks.js";
import type { HookCaller } from "../../src/mcp/hooks.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import { referenceSpec, testServerSpec } from "./helpers.js";

let manager: McpClientManager;
const call: HookCaller = (server, tool, args, options) => manager.callTool(server, tool, args, options);

beforeAll(async () => {
  manager = await McpClientManager.connect({ t: testServerSpec(), everything: referenceSpec("everything") });
});
afterAll(async () => {
  await manager.close();
});

const request: LLMRequest = { messages: [{ role: "user", id: "m1", content: [{ type: "text", text: "hello" }] }] };
const hookCtx = { runId: "run_1", iteration: 1 };

describe("hooks as MCP tools", () => {
  it("reads hook references from the agent's hooks block", () => {
    expect(hookRefs({ request: "t/a", response: ["t/b", { target: "t/c" }] }, "response")).toEqual(["t/b", "t/c"]);
    expect(hookRefs({ request: "t/a" }, "request")).toEqual(["t/a"]);
    expect(hookRefs(undefined, "config")).toEqual([]);
  });

  it("chains hooks in order, reports a failing one and goes on", async () => {
    const mappings = hookMappings({ config: ["t/hook_tag", "t/hook_fail", "t/hook_text", "nowhere/x", "t/hook_tag"] });
    const result = await runHookChain(call, mappings, "config", { agent: { name: "a" } });
    expect(result.payload).toEqual({ agent: { name: "a" }, trace: ["tag", "tag"], text_hook: true });
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings[0]).toBe("config hook t/hook_fail failed: hook exploded");
    expect(result.warnings[1]).toContain("Unknown MCP server 'nowhere'");
  });

  it("parses Go's hook keys: name?k=v parameters, * and !mutate:, keys in sorted order", () => {
    expect(parseHookKey("tools/call?direction=request&name=a&name=b")).toEqual({ name: "tools/call", params: { direction: "request", name: "a,b" } });
    const mappings = hookMappings({ "z?x=1": "s/z", "*": ["!mutate:s/any"], a: "s/a" });
    expect(mappings.map((m) => m.key)).toEqual(["*", "a", "z?x=1"]);
    expect(mappings[0]!.targets).toEqual([{ target: "s/any", mutateDisallowed: true }]);
  });

  it("lets a request hook add a response, and the chain goes on as in Go", async () => {
    const result = await runHookChain(call, hookMappings({ request: ["t/hook_answer", "t/hook_tag"] }), "request", { request });
    expect(result.payload.response).toEqual({ content: "answered by hook" });
    expect(result.payload.trace).toEqual(["tag"]);
  });

  it("adapts to the engine's AgentHooks: a short-circuit becomes the model response", async () => {
    const warnings: string[] = [];
    const hooks = mcpHooks(call, { request: ["t/hook_fail", "t/hook_answer"] }, { warn: (w) => warnings.push(w) });
    const before = await hooks.beforeIteration!(hookCtx, request);
    expect(before && before.response && textOf(before.response.message)).toBe("answered by hook");
    expect(before && before.response?.message.role).toBe("assistant");
    expect(warnings).toEqual(["request hook t/hook_fail failed: hook exploded"]);
  });

  it("lets a response hook replace the response", async () => {
    const hooks = mcpHooks(call, { response: ["t/hook_answer"] });
    const response: ModelResponse = {
      message: { role: "assistant", id: "a1", content: [{ type: "text", text: "model said" }] },
      finishReason: "stop",
      usage: { promptTokens: 1, completionTokens: 1 },
      provider: "p",
      model: "m",
    };
    await hooks.beforeIteration!(hookCtx, request);
    const replaced = await hooks.afterResponse!(hookCtx, response);
    expect(replaced && textOf(replaced.message)).toBe("answered by hook");
  });
});
