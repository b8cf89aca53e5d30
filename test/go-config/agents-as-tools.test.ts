/**
 * An agent another agent uses runs its own full loop with its own tools, as in the Go nanobot:
 * the research bot's `searchAgent` sampled by the manager MCP server searches with its `search`
 * server, and a `tools: [searchAgent]` reference becomes a `chat-with-searchAgent` tool. Both
 * through `nanobot agent -m` with the research-bot config and real stdio MCP servers.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { REPO, project, systemPromptOf, goConfigSuite } from "./helpers.js";
import type { Project } from "./helpers.js";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures/research-bot/nanobot.yaml");

const fake = goConfigSuite();
let p: Project;

type Body = { model: string; messages: Array<{ role: string; content: unknown; tool_calls?: unknown }>; tools?: Array<{ function?: { name: string } }>; tool_choice?: unknown };
const toolNames = (body: Body): string[] => (body.tools ?? []).map((t) => t.function?.name ?? "");
const env = (): Record<string, string> => ({ OPENAI_API_KEY: "sk-agents-as-tools-0001", OPENAI_BASE_URL: fake.openaiBaseURL, BRAVE_API_KEY: "brave-test-key" });

/** The research-bot config with its stand-in servers filled in; `edit` may change it first. */
type GoConfig = { agents: Record<string, unknown>; publish: { entrypoint?: string | string[] } };

async function researchBot(edit?: (config: GoConfig) => void): Promise<string> {
  const text = (await readFile(FIXTURE, "utf8")).replaceAll("{{NODE}}", process.execPath).replaceAll("{{REPO}}", REPO);
  const config = parse(text) as GoConfig;
  edit?.(config);
  return p.write("research-bot/nanobot.yaml", stringify(config));
}

describe("research-bot: a sampled agent runs with its own tools", () => {
  it("searchAgent, sampled by the manager server, calls its search server's tool and answers from the result", async () => {
    p = await project(env());
    // A lead agent runs the manager's `research` tool (the Go example's entrypoint is that tool).
    const file = await researchBot((c) => {
      c.agents = { lead: { model: "gpt-4.1", instructions: "Use the research tool.", tools: ["manager/research"] }, ...c.agents };
      c.publish.entrypoint = ["lead"];
    });
    const plan = { searches: [{ reason: "basics", query: "kite history" }] };
    fake.enqueue(
      { toolCalls: [{ id: "r1", name: "research", arguments: { prompt: "kites" } }] }, // lead
      { text: JSON.stringify(plan) }, // planner
      { toolCalls: [{ id: "s1", name: "catalog", arguments: { query: "kite history" } }] }, // searchAgent, round 1
      { text: "Kites date from 1000 BC." }, // searchAgent, round 2
      { text: "# Kites\nA report." }, // writer
      { text: "Here is your report on kites." }, // lead
    );
    const start = fake.requests.length;
    const r = await p.run(["agent", "-m", "research kites", "--config", file]);
    expect(r).toMatchObject({ code: 0, out: "Here is your report on kites.\n" });
    const bodies = fake.requests.slice(start).map((q) => q.body as Body);
    expect(bodies).toHaveLength(6);
    const [lead, planner, search1, search2, writer, leadAgain] = bodies as [Body, Body, Body, Body, Body, Body];
    expect(toolNames(lead)).toEqual(["research"]);
    expect(systemPromptOf(planner)).toContain("Given a query, come up with a set of web searches");
    // searchAgent is offered its own server's tools, with its toolChoice, and reads the tool's result.
    expect(systemPromptOf(search1)).toContain("Given a search term, you search the web");
    expect(toolNames(search1)).toContain("catalog");
    expect(search1.tool_choice).toBe("required");
    expect(JSON.stringify(search1.messages)).toContain("Search term: kite history");
    expect(JSON.stringify(search2.messages.at(-1))).toContain("search catalog: kite history");
    expect(writer.model).toBe("o3-mini");
    expect(JSON.stringify(writer.messages)).toContain("Kites date from 1000 BC.");
    expect(JSON.stringify(leadAgain.messages.at(-1))).toContain("# Kites");
  }, 60_000);
});

describe("tools: [agent] (Go): the agent is offered as chat-with-<agent>", () => {
  it("the lead's chat-with-searchAgent call runs searchAgent's own loop with its search tools", async () => {
    p = await project(env());
    const file = await researchBot((c) => {
      c.agents = { lead: { model: "gpt-4.1", instructions: "Delegate searches.", tools: ["searchAgent"] }, ...c.agents };
      c.publish.entrypoint = ["lead"];
    });
    fake.enqueue(
      { toolCalls: [{ id: "a1", name: "chat-with-searchAgent", arguments: { prompt: "Search term: ripstop" } }] }, // lead
      { toolCalls: [{ id: "s1", name: "catalog", arguments: { query: "ripstop" } }] }, // searchAgent
      { text: "Ripstop is a woven nylon." }, // searchAgent
      { text: "Ripstop nylon, then." }, // lead
    );
    const start = fake.requests.length;
    const r = await p.run(["agent", "-m", "what fabric?", "--config", file]);
    expect(r).toMatchObject({ code: 0, out: "Ripstop nylon, then.\n" });
    const [lead, search1, search2, leadAgain] = fake.requests.slice(start).map((q) => q.body as Body) as [Body, Body, Body, Body];
    expect(toolNames(lead)).toContain("chat-with-searchAgent");
    expect(toolNames(lead)).not.toContain("catalog");
    expect(search1.model).toBe("gpt-4o");
    expect(toolNames(search1)).toContain("catalog");
    expect(JSON.stringify(search2.messages.at(-1))).toContain("search catalog: ripstop");
    expect(JSON.stringify(leadAgain.messages.at(-1))).toContain("Ripstop is a woven nylon.");
  }, 60_000);
});
