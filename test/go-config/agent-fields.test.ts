/**
 * Go agent fields through `nanobot agent -m --config nanobot.yaml`, asserted on what the fake
 * LLM received: topP, truncation, reasoning{effort,summary} and toolExtensions on the chat and
 * responses APIs; threadName (its own thread in the session) and chat: false (nothing saved).
 */
import { describe, expect, it } from "vitest";
import { project, goConfigSuite } from "./helpers.js";
import type { Project } from "./helpers.js";

const fake = goConfigSuite();
let p: Project;

const GO_FIELDS = {
  topP: 0.25,
  truncation: "auto",
  reasoning: { effort: "low", summary: "detailed" },
  toolExtensions: { read_file: { cache_control: { type: "ephemeral" }, remove: ["strict"] } },
  tools: ["read_file"],
};

function config(dialect: string, agents: Record<string, unknown>): Record<string, unknown> {
  return {
    llmProviders: { fake: { dialect, baseURL: fake.openaiBaseURL, apiKey: "sk-go-fields-0001" } },
    agents,
  };
}

type Body = Record<string, unknown> & { tools?: Array<Record<string, unknown>>; messages?: Array<{ role: string; content: unknown }> };
const lastBody = (): Body => fake.requests.at(-1)?.body as Body;

describe("Go agent fields reach the provider request", () => {
  it("chat completions: top_p, reasoning_effort and the tool's extensions", async () => {
    p = await project();
    await p.write("nanobot.yaml", config("OpenAIChatCompletions", { main: { model: "fake/test-model", ...GO_FIELDS } }));
    fake.enqueue({ text: "ok" });
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(0);
    const body = lastBody();
    expect(body).toMatchObject({ top_p: 0.25, reasoning_effort: "low" });
    const tool = body.tools?.find((t) => (t.function as { name?: string } | undefined)?.name === "read_file");
    expect(tool).toMatchObject({ type: "function", cache_control: { type: "ephemeral" } });
    expect(r.err).not.toContain("unknown key");
  });

  it("responses: top-level truncation, reasoning {effort, summary}, extensions merged and removed keys gone", async () => {
    p = await project();
    await p.write("nanobot.yaml", config("OpenAIResponses", { main: { model: "fake/test-model", ...GO_FIELDS } }));
    fake.enqueue({ text: "ok" });
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(0);
    expect(fake.requests.at(-1)?.path).toBe("/v1/responses");
    const body = lastBody();
    expect(body).toMatchObject({ truncation: "auto", reasoning: { effort: "low", summary: "detailed" } });
    const tool = body.tools?.find((t) => t.name === "read_file");
    expect(tool).toMatchObject({ type: "function", cache_control: { type: "ephemeral" } });
    expect(tool).not.toHaveProperty("strict");
  });

  it("refuses a reasoning effort or truncation the providers do not know, naming the key", async () => {
    p = await project();
    await p.write("nanobot.yaml", config("OpenAIResponses", { main: { model: "fake/test-model", truncation: "sometimes" } }));
    const r = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("agents.main.truncation");
  });
});

describe("threadName and chat: false", () => {
  it("threadName keeps an agent's own thread; chat: false saves nothing between calls", async () => {
    p = await project();
    await p.write(
      "nanobot.yaml",
      {
        ...config("OpenAIChatCompletions", {
          main: { model: "fake/test-model", instructions: "main" },
          scribe: { model: "fake/test-model", instructions: "scribe", threadName: "notes" },
          oneshot: { model: "fake/test-model", instructions: "oneshot", chat: false },
        }),
        publish: { entrypoint: ["main", "scribe", "oneshot"] },
      },
    );
    const userTexts = (): string[] =>
      (lastBody().messages ?? []).filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

    fake.enqueue({ text: "a1" }, { text: "b1" }, { text: "a2" }, { text: "o1" }, { text: "o2" });
    await p.run(["agent", "-m", "to main", "-s", "cli:t", "--config", "nanobot.yaml"]);
    await p.run(["agent", "-m", "to scribe", "-s", "cli:t", "-a", "scribe", "--config", "nanobot.yaml"]);
    // The scribe's thread does not hold main's message.
    expect(userTexts().some((t) => t.includes("to main"))).toBe(false);
    await p.run(["agent", "-m", "main again", "-s", "cli:t", "--config", "nanobot.yaml"]);
    expect(userTexts().some((t) => t.includes("to main"))).toBe(true);
    expect(userTexts().some((t) => t.includes("to scribe"))).toBe(false);

    await p.run(["agent", "-m", "first one-shot", "-s", "cli:t", "-a", "oneshot", "--config", "nanobot.yaml"]);
    const r = await p.run(["agent", "-m", "second one-shot", "-s", "cli:t", "-a", "oneshot", "--config", "nanobot.yaml"]);
    expect(r.out).toBe("o2\n");
    expect(userTexts().some((t) => t.includes("first one-shot"))).toBe(false);
    const sessions = await p.run(["sessions", "list", "--json"], {});
    expect(sessions.out).toContain('"cli:t/thread/notes"');
    expect(sessions.out).not.toContain("oneshot");
  });
});
