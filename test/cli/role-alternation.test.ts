/**
 * The role-alternation net on the wire of an OpenAI-compatible provider (not only Anthropic):
 * a turn that failed before the model answered leaves its user message unanswered; the next
 * request carries one user turn, not two in a row.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { alternateRoles } from "../../src/engine/governance/alternate-roles.js";
import { assistantMessage, textOf, userMessage } from "../../src/core/message-helpers.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { InProcessRun } from "../support/cli-in-process.js";

let root: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-roles-"));
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
  await writeFile(
    join(root, "config.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-roles-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
    }),
  );
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function run(args: string[]): Promise<InProcessRun> {
  return runCliInProcess(["--config", join(root, "config.json"), ...args], { env: { HOME: root, NANOBOT_HOME: join(root, "nb") }, cwd: root });
}

describe("role alternation for an OpenAI-compatible provider", () => {
  it("merges a user message left unanswered (the process died mid-turn) with the next one", async () => {
    // What a killed process leaves behind: the user's message is stored, no reply follows it.
    const store = new SqliteSessionStore({ path: join(root, "nb", "state.db") });
    await store.appendMessages("cli:roles", [userMessage("earlier question"), assistantMessage("earlier answer"), userMessage("first question")]);
    await store.close();
    fake.enqueue({ text: "answered both" });
    const ok = await run(["agent", "-m", "second question", "-s", "cli:roles"]);
    expect(ok).toMatchObject({ code: 0, out: "answered both\n" });
    const messages = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    const lastUser = JSON.stringify(messages.at(-1)?.content);
    expect(lastUser).toContain("first question");
    expect(lastUser).toContain("second question");
  });
});

describe("alternateRoles", () => {
  it("opens with a user turn and merges two assistant texts in a row", () => {
    const out = alternateRoles([assistantMessage("hello"), userMessage("hi"), assistantMessage("a"), assistantMessage("b")]);
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(textOf(out[0]!)).toBe("(conversation continued)");
    expect(textOf(out[3]!)).toBe("a\n\nb");
  });

  it("merges two assistant texts, keeping the later tool calls", () => {
    const withCall = assistantMessage("calling", [{ type: "toolCall", id: "c1", name: "t", arguments: {}, rawArguments: "{}" }]);
    const out = alternateRoles([userMessage("q"), assistantMessage("thinking aloud"), withCall]);
    expect(out).toHaveLength(2);
    expect(out[1]!.content.map((p) => p.type)).toEqual(["text", "text", "text", "toolCall"]);
  });
});
