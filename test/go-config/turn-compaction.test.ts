/**
 * A long-running turn is compacted as the Go nanobot compacts it: once the run is past its
 * first round and its own messages fill the window, everything (this turn's rounds included)
 * is summarised and the run continues from the summary. Through `nanobot agent -m` with a Go
 * agent whose `contextWindow` is small and a real stdio MCP tool returning 50 KiB.
 */
import { describe, expect, it } from "vitest";
import { project, stdioServer, goConfigSuite } from "./helpers.js";
import type { Project } from "./helpers.js";

const fake = goConfigSuite();
let p: Project;

type Body = { messages: Array<{ role: string; content: unknown }>; tools?: unknown[] };
const wire = (i: number): Body => fake.requests[i]?.body as Body;

describe("in-turn compaction (Go: everything after round 1)", () => {
  it("summarises this turn's own rounds when they alone overflow, then answers from the summary", async () => {
    p = await project();
    await p.write("nanobot.yaml", {
      llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-go-compact-0001" } },
      agents: { main: { model: "fake/test-model", instructions: "Research.", mcpServers: ["store"], contextWindow: 12_000, maxTokens: 500 } },
      mcpServers: { store: stdioServer() },
    });
    const start = fake.requests.length;
    fake.enqueue({ toolCalls: [{ id: "call_big", name: "big", arguments: {} }] }, { text: "SUMMARY-OF-THE-RUN" }, { text: "final answer" });
    const r = await p.run(["agent", "-m", "QUESTION-KITES: dump the store", "-s", "cli:long", "--config", "nanobot.yaml"]);
    expect(r.err).not.toContain("error");
    expect(r).toMatchObject({ code: 0, out: "final answer\n" });
    expect(fake.requests.length - start).toBe(3);

    // The summary request (no tools) saw the user's question and the tool output of round 1.
    const summaryRequest = JSON.stringify(wire(start + 1).messages);
    expect(wire(start + 1).tools).toBeUndefined();
    expect(summaryRequest).toContain("QUESTION-KITES");
    expect(summaryRequest).toContain("line 00000");
    // Round 2 continues from the summary alone: the 50 KiB round is not replayed.
    const round2 = wire(start + 2);
    expect(JSON.stringify(round2.messages)).toContain("SUMMARY-OF-THE-RUN");
    expect(round2.messages.some((m) => m.role === "tool")).toBe(false);
    expect(JSON.stringify(round2.messages).length).toBeLessThan(10_000);

    // The next turn still works in the same session.
    fake.enqueue({ text: "next" });
    expect((await p.run(["agent", "-m", "and now?", "-s", "cli:long", "--config", "nanobot.yaml"])).out).toBe("next\n");
  });
});
