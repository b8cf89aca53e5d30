/**
 * Dream on a Go-style config, through the CLI (`nanobot agent -m /dream` with a nanobot.yaml):
 * the agent on OpenAI Responses sends no output limit of its own (Go's adapter sends none), and
 * its Dream request does not either; an agent that sets maxTokens sends it.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { HistoryLog } from "../../src/memory/history-log.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let root: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-go-dream-"));
  await mkdir(join(root, "home", "workspace"), { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function dreamLimit(agentSettings: string): Promise<unknown> {
  await writeFile(
    join(root, "nanobot.yaml"),
    [
      "llmProviders:",
      "  fake:",
      "    dialect: OpenAIResponses",
      `    baseURL: ${fake.openaiBaseURL}`,
      "    apiKey: sk-go-dream-0001",
      "agents:",
      "  main:",
      "    model: fake/m",
      "    instructions: You help.",
      agentSettings,
      "",
    ].join("\n"),
  );
  // A Go config's workspace is the nanobot home's default one.
  new HistoryLog(join(root, "home", "workspace")).append("cli:x", "Ada drinks tea.");
  fake.enqueue({ text: "Nothing to change." });
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { HOME: root, NANOBOT_HOME: join(root, "home"), PATH: process.env.PATH },
    cwd: root,
  };
  const code = await main(["node", "nanobot", "agent", "-m", "/dream"], io);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  expect(out).toContain("Dream processed 1 history entry");
  expect(fake.requests.at(-1)?.path).toBe("/v1/responses");
  return (fake.requests.at(-1)?.body as Record<string, unknown>)["max_output_tokens"];
}

describe("Dream's output limit for a Go agent on Responses (nanobot agent -m /dream)", () => {
  it("sends none when the agent sets none, as the agent's own turns", async () => {
    expect(await dreamLimit("")).toBeUndefined();
  });

  it("sends the agent's maxTokens when it sets one", async () => {
    expect(await dreamLimit("    maxTokens: 777")).toBe(777);
  });
});
