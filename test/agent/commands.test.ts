import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/agent/commands/registry.js";
import { createBuiltinCommands } from "../../src/agent/commands/builtin.js";
import { createHarness, finalMessages, roles, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("parseCommand", () => {
  it("accepts /cmd, /cmd@bot and arguments; rejects paths and plain text", () => {
    expect(parseCommand("/history 5")).toEqual({ name: "history", args: "5" });
    expect(parseCommand("/Status@my_bot")).toEqual({ name: "status", args: "" });
    expect(parseCommand("/usr/bin/env is broken")).toBeUndefined();
    expect(parseCommand("hello /new")).toBeUndefined();
  });

  it("suggests the closest command", () => {
    const registry = createBuiltinCommands();
    expect(registry.unknownText("stauts")).toBe('Unknown command "/stauts". Did you mean "/status"?');
    expect(registry.unknownText("hist")).toBe('Unknown command "/hist". Did you mean "/history"?');
    expect(registry.unknownText("zzzzzz")).toBe('Unknown command "/zzzzzz". Type /help to see the commands.');
  });
});

describe("slash commands through the loop", () => {
  it("an unknown command gets a suggestion and never reaches the LLM or the history", async () => {
    h = await createHarness();
    await h.send("/stauts");
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    expect(finalMessages(h.outbound)[0]?.content).toBe('Unknown command "/stauts". Did you mean "/status"?');
    expect(h.fake.requests).toHaveLength(0);
    expect(await h.runtime.store().loadMessages("telegram:42")).toEqual([]);
  });

  it("/help lists the commands with descriptions (with @botname)", async () => {
    h = await createHarness({ start: false });
    const reply = await h.loop.process({ sessionKey: "cli:x", content: "/help@nanobot" });
    expect(reply.command).toBe("help");
    for (const name of ["/new", "/stop", "/status", "/model [preset]", "/history [n]", "/skill [name]", "/dream", "/restart"]) {
      expect(reply.content).toContain(name);
    }
  });

  it("/new archives the conversation and the next turn starts with fresh context", async () => {
    h = await createHarness({ start: false });
    h.fake.enqueue({ text: "Nice to meet you, Ada." }, { text: "I do not know your name yet." });
    await h.loop.process({ sessionKey: "cli:x", content: "my name is Ada" });
    const reset = await h.loop.process({ sessionKey: "cli:x", content: "/new" });
    expect(reset.content).toBe("Started a new conversation. The previous one is archived.");
    await h.loop.process({ sessionKey: "cli:x", content: "what is my name?" });
    expect(roles(h.fake.requests[1]).map(([role, text]) => (role === "system" ? "system" : `${role}:${text}`))).toEqual(["system", "user:what is my name?"]);
    const threads = await h.runtime.store().listThreads("cli:x");
    expect(threads.filter((t) => t.status === "archived")).toHaveLength(1);
  });

  it("/status reports model, session tokens, context, messages and uptime", async () => {
    h = await createHarness({ start: false });
    h.fake.enqueue({ text: "hello", usage: { promptTokens: 120, completionTokens: 7 } });
    await h.loop.process({ sessionKey: "cli:x", content: "hi" });
    const status = await h.loop.process({ sessionKey: "cli:x", content: "/status" });
    const lines = status.content.split("\n");
    expect(lines[0]).toBe("Model: custom/test-model");
    expect(lines[1]).toBe("Tokens: 120 in / 7 out");
    expect(lines[2]).toMatch(/^Context: ~\d+ of 200000 tokens \(\d+%\)$/);
    expect(lines[3]).toBe("Messages: 2");
    expect(lines[5]).toMatch(/^Uptime: \d+s$/);
  });

  it("/model switches the session to a preset used by the next turn", async () => {
    h = await createHarness({ start: false, config: { modelPresets: { fast: { model: "custom/fast-model" } } } });
    expect((await h.loop.process({ sessionKey: "cli:x", content: "/model nope" })).content).toBe('Could not switch model preset: "nope" not found.\nAvailable presets: default, fast');
    expect((await h.loop.process({ sessionKey: "cli:x", content: "/model FAST" })).content).toBe(
      "Switched model preset to fast (this session).\nModel: custom/fast-model\nContext window: 200000\nMax output tokens: 8192\nTemperature: 0.1",
    );
    h.fake.enqueue({ text: "quick" });
    await h.loop.process({ sessionKey: "cli:x", content: "hi" });
    expect(h.fake.requests[0]?.body.model).toBe("fast-model");
    expect((await h.loop.process({ sessionKey: "cli:x", content: "/model" })).content).toBe("Model: custom/fast-model\nPreset: fast (this session)\nPresets: default, fast");
  });

  it("/history shows the last n messages", async () => {
    h = await createHarness({ start: false });
    h.fake.enqueue({ text: "answer one" }, { text: "answer two" });
    await h.loop.process({ sessionKey: "cli:x", content: "question one" });
    await h.loop.process({ sessionKey: "cli:x", content: "question two" });
    const reply = await h.loop.process({ sessionKey: "cli:x", content: "/history 3" });
    // Headed by the thread's title, taken from its first message.
    expect(reply.content).toBe("— question one —\nAssistant: answer one\nYou: question two\nAssistant: answer two");
  });

  it("/restart without a restart hook says it is unavailable", async () => {
    h = await createHarness({ start: false });
    expect((await h.loop.process({ sessionKey: "cli:x", content: "/restart" })).content).toMatch(/^Restart is not available here/);
  });
});
