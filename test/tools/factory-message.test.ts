import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { BUILTIN_TOOL_NAMES, createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { OutboundMessage } from "../../src/tools/builtin/message.js";
import { byName, ctxFor, runTool } from "./helpers.js";

const names = (options: Parameters<typeof createBuiltinTools>[0]) => createBuiltinTools(options).map((t) => t.name);

describe("createBuiltinTools", () => {
  it("offers every built-in when all is enabled and a sendMessage seam exists", () => {
    expect(names({ workspace: "/tmp", sendMessage: async () => undefined })).toEqual([...BUILTIN_TOOL_NAMES]);
  });

  it("leaves out exec and the web tools when disabled in config, and message without a seam", () => {
    expect(names({ workspace: "/tmp", exec: { enable: false }, web: { enable: false } })).toEqual(["read_file", "write_file", "edit_file", "list_dir", "find_files", "grep"]);
  });

  it("honours the agent's enabled list", () => {
    expect(names({ workspace: "/tmp", enabled: ["grep", "read_file", "exec"], exec: { enable: false } })).toEqual(["read_file", "grep"]);
  });

  it("gives every tool an object schema with properties and a description", () => {
    for (const tool of createBuiltinTools({ workspace: "/tmp", sendMessage: async () => undefined })) {
      expect(tool.parameters, tool.name).toMatchObject({ type: "object", properties: expect.any(Object) });
      expect(tool.parameters.$schema, tool.name).toBeUndefined();
      expect(tool.description.length, tool.name).toBeGreaterThan(60);
    }
  });

  it("fails loudly on invalid configuration", () => {
    expect(() => createBuiltinTools({ workspace: "/tmp", ssrfWhitelist: ["not-a-cidr"] })).toThrow(ConfigError);
    expect(() => createBuiltinTools({ workspace: "/tmp", exec: { denyPatterns: ["("] } })).toThrow(ConfigError);
  });
});

describe("message", () => {
  it("sends through the seam and marks the turn so the final reply is not sent", async () => {
    const sent: OutboundMessage[] = [];
    const tool = byName(createBuiltinTools({ workspace: "/tmp", sendMessage: async (m) => void sent.push(m) }), "message");
    const output = await tool.execute({ content: "Done!", channel: "telegram", chatId: "42" }, { ...ctxFor("/tmp"), sessionKey: "telegram:42" }, new AbortController().signal);
    expect(output).toEqual({ content: [{ type: "text", text: "Message sent to telegram:42." }], suppressFinalReply: true });
    expect(sent).toEqual([{ content: "Done!", channel: "telegram", chatId: "42", sessionKey: "telegram:42" }]);
  });

  it("defaults to the current conversation", async () => {
    const sent: OutboundMessage[] = [];
    const tool = byName(createBuiltinTools({ workspace: "/tmp", sendMessage: async (m) => void sent.push(m) }), "message");
    expect((await runTool(tool, { content: "hi" }, ctxFor("/tmp"))).text).toBe("Message sent to the current conversation.");
    expect(sent).toEqual([{ content: "hi" }]);
  });

  it("reports a failed delivery without marking the turn", async () => {
    const tool = byName(createBuiltinTools({ workspace: "/tmp", sendMessage: async () => Promise.reject(new Error("channel offline")) }), "message");
    const result = await runTool(tool, { content: "hi", channel: "slack" }, ctxFor("/tmp"));
    expect(result).toMatchObject({ isError: true, text: "Error: could not send the message to slack: channel offline" });
    expect(typeof result.output !== "string" && result.output.suppressFinalReply).toBeFalsy();
  });

  it("rejects empty content", async () => {
    const tool = byName(createBuiltinTools({ workspace: "/tmp", sendMessage: async () => undefined }), "message");
    expect((await runTool(tool, { content: "" }, ctxFor("/tmp"))).text).toMatch(/^Invalid arguments for message:\n- content: /);
  });
});
