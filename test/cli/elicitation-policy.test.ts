/**
 * `mcp.elicitation` for faces with no user: `nanobot agent -m` with a real stdio MCP server
 * whose tools elicit (test/mcp/servers/elicit-defaults-server.ts). "defaults" accepts with the
 * form's defaults when every required field has one (the logic of the conformance scenario
 * `elicitation-sep1034-client-defaults`), else declines; "decline" (the default) declines.
 * The key is read from both config formats (JSON and YAML).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { main } from "../../src/cli/main.js";
import { ElicitationRouter } from "../../src/mcp/elicitation-router.js";
import type { ElicitationRequest } from "../../src/mcp/types.js";
import type { CliIo } from "../../src/cli/io.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
const elicitServer = { command: process.execPath, args: ["--import", tsxLoader, join(repo, "test/mcp/servers/elicit-defaults-server.ts")] };

let root: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-elicit-policy-"));
  await mkdir(join(root, "ws"), { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

/** Writes the config in `format` with `mcp` as given (undefined = key absent). */
async function writeConfig(format: "json" | "yaml", mcp: Record<string, unknown> | undefined): Promise<string> {
  const config = {
    providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-elicit-policy-0001" } },
    agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
    mcpServers: { forms: elicitServer },
    ...(mcp ? { mcp } : {}),
  };
  const file = join(root, format === "json" ? "nanobot.json" : "nanobot.yaml");
  await writeFile(file, format === "json" ? JSON.stringify(config) : stringify(config));
  return file;
}

/** One `agent -m` turn in which the model calls `tool`; returns what the server reported back. */
async function turnCalling(configFile: string, tool: string): Promise<{ action: string; content: Record<string, unknown> | null }> {
  fake.enqueue({ toolCalls: [{ id: "call_form", name: `mcp_forms_${tool}`, arguments: {} }] }, { text: "done" });
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { HOME: root, NANOBOT_HOME: join(root, "nb"), PATH: process.env.PATH ?? "" },
    cwd: root,
  };
  const code = await main(["node", "nanobot", "--config", configFile, "agent", "-m", "fill the form"], io);
  expect(code, err).toBe(0);
  expect(out).toBe("done\n");
  const messages = (fake.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  const result = messages.find((m) => m.role === "tool")?.content;
  const text = typeof result === "string" ? result : JSON.stringify(result);
  fake.assertDone();
  return JSON.parse(text) as { action: string; content: Record<string, unknown> | null };
}

describe("mcp.elicitation: defaults", () => {
  it("accepts the SEP-1034 form with every default (string, integer, number, enum, boolean) — JSON config", async () => {
    const answer = await turnCalling(await writeConfig("json", { elicitation: "defaults" }), "sep1034_defaults");
    expect(answer).toEqual({ action: "accept", content: { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true } });
  });

  it("declines a form whose required field has no default — YAML config", async () => {
    const answer = await turnCalling(await writeConfig("yaml", { elicitation: "defaults" }), "needs_name");
    expect(answer).toEqual({ action: "decline", content: null });
  });

  it("accepts with defaults from a YAML config too", async () => {
    const answer = await turnCalling(await writeConfig("yaml", { elicitation: "defaults" }), "sep1034_defaults");
    expect(answer.action).toBe("accept");
  });
});

describe("mcp.elicitation: decline (the default)", () => {
  it("declines even a form that defaults could answer when the key is absent", async () => {
    const answer = await turnCalling(await writeConfig("json", undefined), "sep1034_defaults");
    expect(answer).toEqual({ action: "decline", content: null });
  });

  it("declines when set explicitly", async () => {
    const answer = await turnCalling(await writeConfig("json", { elicitation: "decline" }), "sep1034_defaults");
    expect(answer).toEqual({ action: "decline", content: null });
  });
});

describe("config check", () => {
  it("names file, key and expectation for an unknown value", async () => {
    const file = await writeConfig("json", { elicitation: "ask" });
    let err = "";
    const io: CliIo = {
      stdout: { write: () => undefined },
      stderr: { write: (s: string) => (err += s) },
      env: { HOME: root, NANOBOT_HOME: join(root, "nb") },
      cwd: root,
    };
    const code = await main(["node", "nanobot", "--config", file, "config", "check"], io);
    expect(code).not.toBe(0);
    expect(err).toContain("nanobot.json");
    expect(err).toContain("mcp.elicitation");
    expect(err).toMatch(/decline.*defaults/);
  });
});

describe("interactive faces keep asking under defaults", () => {
  it("a session whose face registered an asker gets the question, not the defaults", async () => {
    const router = new ElicitationRouter({ unattended: "defaults" });
    const asked: string[] = [];
    const unregister = router.register("cli:direct", (request) => {
      asked.push(request.message);
      return Promise.resolve({ action: "accept", content: { name: "Ada", color: "red" } });
    });
    const request: ElicitationRequest = {
      server: "forms",
      message: "Who are you?",
      mode: "form",
      requestedSchema: { type: "object", properties: { name: { type: "string" }, color: { type: "string", default: "blue" } }, required: ["name"] },
      callers: ["cli:direct"],
    };
    expect(await router.handle(request, new AbortController().signal)).toEqual({ action: "accept", content: { name: "Ada", color: "red" } });
    expect(asked).toEqual(["Who are you?"]);
    unregister();
    // Once the face is gone, nobody can ask: the required name has no default, so decline.
    expect(await router.handle(request, new AbortController().signal)).toEqual({ action: "decline" });
  });
});
