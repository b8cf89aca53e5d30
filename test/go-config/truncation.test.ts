/**
 * Tool output truncation per dialect, through `nanobot agent -m` with a real stdio MCP server:
 * a Go agent keeps up to 50 KiB of a 60 KiB result (the full text in a 0600 file) and nothing
 * of a result that carries the skip-truncation `_meta` is cut; a Python-dialect config keeps
 * its `maxToolResultChars` offload (a short preview and a file) for a 20,000-character result.
 */
import { readFile, stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { project, stdioServer, goConfigSuite } from "./helpers.js";
import type { Project } from "./helpers.js";

const fake = goConfigSuite();
let p: Project;

const BIG = 60 * 1024;

function goConfig(): Record<string, unknown> {
  return {
    llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-go-trunc-0001" } },
    agents: { main: { model: "fake/test-model", instructions: "Use the store.", mcpServers: ["store"] } },
    mcpServers: { store: stdioServer() },
  };
}

/** The tool message the model got in the last request. */
function toolText(): string {
  const messages = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  const tool = messages.filter((m) => m.role === "tool").at(-1);
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content);
}

describe("Go agents: 50 KiB like the Go nanobot", () => {
  it("keeps the head up to 50 KiB and writes the full output owner-only", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig());
    // Go configs offer the server's bare tool names (no mcp_<server>_ prefix).
    fake.enqueue({ toolCalls: [{ id: "call_big", name: "big", arguments: {} }] }, { text: "done" });
    const r = await p.run(["agent", "-m", "dump", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(0);
    const text = toolText();
    const path = /saved at (\S+\.txt);/.exec(text)?.[1];
    expect(path).toBeDefined();
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(51_200);
    // Far more than the old 10,000-character head: all but the last few KiB.
    expect(Buffer.byteLength(text, "utf8")).toBeGreaterThan(50_000);
    expect(text.startsWith("line 00000 ")).toBe(true);
    const full = await readFile(path!, "utf8");
    expect(full.length).toBe(BIG);
    expect((await stat(path!)).mode & 0o777).toBe(0o600);
  });

  it("does not cut a result whose content carries ai.nanobot.meta/skip-truncation", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig());
    fake.enqueue({ toolCalls: [{ id: "call_skip", name: "big_skip", arguments: {} }] }, { text: "done" });
    expect((await p.run(["agent", "-m", "dump", "--config", "nanobot.yaml"])).code).toBe(0);
    const text = toolText();
    expect(text.length).toBe(BIG);
    expect(text).not.toContain("truncated");
  });

  it("passes a 20,000-character result whole (no Python offload for Go agents)", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig());
    fake.enqueue({ toolCalls: [{ id: "call_mid", name: "medium", arguments: {} }] }, { text: "done" });
    expect((await p.run(["agent", "-m", "dump", "--config", "nanobot.yaml"])).code).toBe(0);
    expect(toolText()).toBe("m".repeat(20_000));
  });
});

describe("Python configs keep maxToolResultChars", () => {
  it("offloads a 20,000-character result to a preview and a file", async () => {
    p = await project();
    await p.write("config.json", JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-py-trunc-0001" } },
      agents: { defaults: { model: "custom/test-model", maxToolResultChars: 16000 } },
      tools: { mcpServers: { store: stdioServer() } },
    }));
    fake.enqueue({ toolCalls: [{ id: "call_mid", name: "mcp_store_medium", arguments: {} }] }, { text: "done" });
    expect((await p.run(["agent", "-m", "dump", "--config", "config.json"])).code).toBe(0);
    const text = toolText();
    expect(text.length).toBeLessThan(2_000);
    expect(text).toContain("Result truncated: 20000 characters in total");
  });
});
