/**
 * MCP message hooks on every JSON-RPC message (src/mcp/hooked-transport.ts), through
 * `nanobot agent -m` with the fake LLM and the stdio hook server: what a `*` hook sees in both
 * directions, a response rewritten, a server-to-client sampling request refused, a dropped
 * notification; and a config hook that swaps the agent's model and hooks in a later round.
 */
import { describe, expect, it } from "vitest";
import { goTurnFixture } from "./go-turn-helpers.js";

const f = goTurnFixture();
const TIMEOUT = 60_000;

interface Seen {
  accept: boolean;
  message: { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };
}

describe("MCP message hooks see every message", () => {
  it(
    "a '*' hook sees lists, calls with their results, notifications and the server's sampling request with nanobot's reply",
    async () => {
      const config = await f.writeConfig({ tools: ["tools"] }, { tools: f.server({ TOOLS: "log_note,ask_model" }, { hooks: { "*": ["hooks/record"] } }), hooks: f.server() });
      f.fake.enqueue(
        { toolCalls: [{ id: "call_n", name: "log_note", arguments: {} }] },
        { toolCalls: [{ id: "call_a", name: "ask_model", arguments: {} }] },
        { text: "hi there" }, // the sampling request
        { text: "done" },
      );
      const r = await f.nanobot(config, "go");
      expect(r.code).toBe(0);
      const seen = (await f.recorded()).filter((x) => x.tool === "record").map((x) => x.payload as unknown as Seen);
      const methods = seen.map((s) => `${s.message.method}${s.message.result ? " (result)" : ""}`);
      expect(methods).toEqual(
        expect.arrayContaining([
          "tools/list",
          "tools/list (result)",
          "prompts/list",
          "tools/call",
          "tools/call (result)",
          "notifications/message",
          "sampling/createMessage",
          "sampling/createMessage (result)",
        ]),
      );
      // The handshake is not hooked (a hook tool may live on the server being connected).
      expect(methods).not.toContain("initialize");
      const callResult = seen.find((s) => s.message.method === "tools/call" && s.message.result && s.message.params?.name === "log_note")!;
      expect(callResult.message.result).toMatchObject({ content: [{ type: "text", text: "noted" }] });
      const reply = seen.find((s) => s.message.method === "sampling/createMessage" && s.message.result)!;
      expect(reply.message.result).toMatchObject({ role: "assistant", content: { type: "text", text: "hi there" } });
      expect(JSON.stringify(f.body(3).messages)).toContain("the model said: hi there");
    },
    TIMEOUT,
  );

  it(
    "a hook tool on the hooked server itself: its own calls pass unhooked, so nothing waits on itself",
    async () => {
      const config = await f.writeConfig({ tools: ["tools/get_weather"] }, { tools: f.server({}, { hooks: { "*": ["tools/record"] } }) });
      f.fake.enqueue({ toolCalls: [{ id: "call_w", name: "get_weather", arguments: { city: "Oslo" } }] }, { text: "ok" });
      const r = await f.nanobot(config, "weather?");
      expect(r.code).toBe(0);
      expect(f.toolResult(1)).toContain("sunny in Oslo");
      const seen = (await f.recorded()).filter((x) => x.tool === "record").map((x) => (x.payload as unknown as Seen).message);
      expect(seen.filter((m) => m.method === "tools/call" && m.params?.name === "get_weather")).toHaveLength(2);
      // The hook's own tools/call (name "record") is not hooked.
      expect(seen.filter((m) => m.params?.name === "record")).toHaveLength(0);
    },
    TIMEOUT,
  );

  it(
    "a response hook rewrites a tool's answer before the model reads it; the change is logged with its reason",
    async () => {
      const config = await f.writeConfig(
        { tools: ["tools"] },
        { tools: f.server({ TOOLS: "get_weather" }, { hooks: { "tools/call?direction=response&name=get_weather": ["hooks/msg_censor"] } }), hooks: f.server() },
      );
      f.fake.enqueue({ toolCalls: [{ id: "call_w", name: "get_weather", arguments: { city: "Rome" } }] }, { text: "ok" });
      const r = await f.nanobot(config, "weather?");
      expect(f.toolResult(1)).toContain("[censored by hook]");
      expect(f.toolResult(1)).not.toContain("sunny");
      expect(r.err).toContain("MCP message hooks changed a tools/call");
      expect(r.err).toContain("answer censored");
      const seen = (await f.recorded()).find((x) => x.tool === "msg_censor")!.payload as unknown as Seen;
      // Go's response payload: the request (method, params) with its result.
      expect(seen.message).toMatchObject({ method: "tools/call", params: { name: "get_weather" }, result: { content: [{ text: "sunny in Rome" }] } });
    },
    TIMEOUT,
  );

  it(
    "a hook that rejects the server's sampling request: the server gets a JSON-RPC error with the reason, the model is not asked",
    async () => {
      const config = await f.writeConfig(
        { tools: ["tools"] },
        { tools: f.server({ TOOLS: "ask_model" }, { hooks: { "sampling/createMessage?direction=request": ["hooks/msg_reject"] } }), hooks: f.server() },
      );
      f.fake.enqueue({ toolCalls: [{ id: "call_a", name: "ask_model", arguments: {} }] }, { text: "ok" });
      const r = await f.nanobot(config, "ask");
      expect(r.code).toBe(0);
      // Two model requests only: the turn's; no sampling request reached the model.
      expect(f.fake.requests).toHaveLength(2);
      expect(f.toolResult(1)).toContain("sampling failed");
      expect(f.toolResult(1)).toContain("deleting files is not allowed here");
      expect(r.err).toContain("MCP message hook rejected the server's sampling/createMessage");
    },
    TIMEOUT,
  );

  it(
    "a hook that rejects a notification drops it (the call still answers); a rejected prompts/list result is logged and the tools stay",
    async () => {
      const config = await f.writeConfig(
        { tools: ["tools"] },
        {
          tools: f.server({ TOOLS: "log_note" }, { hooks: { "notifications/message": ["hooks/msg_reject"], "prompts/list?direction=response": ["hooks/msg_reject"] } }),
          hooks: f.server(),
        },
      );
      f.fake.enqueue({ toolCalls: [{ id: "call_n", name: "log_note", arguments: {} }] }, { text: "ok" });
      const r = await f.nanobot(config, "note");
      expect(f.toolResult(1)).toContain("noted");
      expect(r.err).toContain("MCP message hook rejected the server's notifications/message");
      expect(r.err).toContain("MCP message hook rejected a prompts/list result");
    },
    TIMEOUT,
  );
});

describe("a config hook that changes the agent in a later round", () => {
  it(
    "switches the model, its settings and the request/response hooks for the rounds that follow",
    async () => {
      const config = await f.writeConfig({ model: "custom/test-model", tools: ["hooks/lookup"], hooks: { config: ["hooks/config_later_model"] } });
      f.fake.enqueue({ toolCalls: [{ id: "call_l", name: "lookup", arguments: {} }] }, { text: "the answer" });
      const r = await f.nanobot(config, "look it up");
      expect(r.code).toBe(0);
      expect(f.body(0).model).toBe("test-model");
      // Round 1 is the configured Go agent, which sets no maxTokens: Go's Chat Completions default.
      expect(f.body(0).max_tokens ?? f.body(0).max_completion_tokens).toBe(4096);
      expect(f.body(1).model).toBe("other-model");
      expect(f.body(1).temperature).toBe(0.3);
      expect(f.body(1).max_tokens ?? f.body(1).max_completion_tokens).toBe(777);
      // The response hook the returned agent brought ran on round 2's answer.
      expect(JSON.parse(r.out).content).toBe("rewritten: the answer");
      expect((await f.recorded()).filter((x) => x.tool === "response_rewrite")).toHaveLength(1);
    },
    TIMEOUT,
  );
});
