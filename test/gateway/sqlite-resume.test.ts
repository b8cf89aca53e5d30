/**
 * A single-node gateway (the built CLI, SQLite in its home) SIGKILLed mid-turn: after a restart,
 * the client's retry with the same Idempotency-Key resumes the turn it started — its message is
 * stored once, what the dead turn completed (a file written, its call and result) is kept and
 * sent to the model rather than done again, and the answer comes back — instead of a 409 asking
 * for a new key. (A round of read-only tools is not saved mid-turn, by design: it is redone.)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { waitFor } from "./helpers.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let nbHome: string;
let fake: FakeLLM;
let gateway: ChildProcess | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nanobot-sqlite-resume-"));
  nbHome = path.join(root, "nb");
  await mkdir(path.join(nbHome, "workspace"), { recursive: true });
  fake = await startFakeLLM();
  await writeFile(
    path.join(nbHome, "config.json"),
    JSON.stringify({ providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test" } }, agents: { defaults: { model: "custom/test-model" } } }),
  );
});
afterEach(async () => {
  gateway?.kill("SIGKILL");
  gateway = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

/** Starts `nanobot gateway` on a free port and resolves its URL. */
async function startGateway(): Promise<string> {
  const child = spawn(process.execPath, [BIN, "gateway", "--port", "0"], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: nbHome, NO_COLOR: "1" },
  });
  gateway = child;
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  await waitFor(() => /listening on (\S+)/.test(out) || child.exitCode !== null, "the gateway to listen", 30_000);
  const url = /listening on (\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`the gateway did not start: ${err}`);
  return url;
}

function ask(url: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": "order-1" },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "add milk to my shopping list" }], session_id: "resume-1" }),
  });
}

describe("a single-node gateway killed mid-turn", () => {
  it("answers the keyed retry after a restart by resuming the turn, the message stored once", { timeout: 60_000 }, async () => {
    fake.enqueue(
      { toolCalls: [{ id: "call_write", name: "write_file", arguments: { path: "shopping.txt", content: "buy milk\n" } }] },
      // The model never answers the dead turn's second request.
      { text: "never sent", hold: { afterChunks: 0, until: new Promise(() => undefined) } },
    );
    const first = await startGateway();
    const lost = ask(first).catch((error: unknown) => error);
    await waitFor(() => fake.requests.length === 2, "the turn's second model request");
    const dead = gateway!;
    const exited = new Promise((resolve) => dead.once("exit", resolve));
    dead.kill("SIGKILL");
    await exited;
    expect(await lost).toBeInstanceOf(Error);

    fake.enqueue({ text: "Added milk to shopping.txt." });
    const second = await startGateway();
    const retry = await ask(second);
    expect(retry.status).toBe(200);
    const body = (await retry.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]!.message.content).toBe("Added milk to shopping.txt.");
    expect(await readFile(path.join(nbHome, "workspace", "shopping.txt"), "utf8")).toBe("buy milk\n");

    // The resumed turn went on from what the dead one completed: the call and its result, once.
    const resumed = fake.requests[2]!.body as { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> };
    const rest = resumed.messages.filter((m) => m.role !== "system");
    expect(rest.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(rest[2]).toMatchObject({ tool_call_id: "call_write" });

    gateway?.kill("SIGTERM");
    await new Promise((resolve) => gateway?.once("exit", resolve));
    gateway = undefined;
    const store = new SqliteSessionStore({ home: nbHome });
    try {
      const history = await store.loadMessages("api:resume-1");
      expect(history.map((m) => `${m.role}:${textOf(m.content).slice(0, 40)}`)).toEqual([
        "user:add milk to my shopping list",
        "assistant:",
        expect.stringMatching(/^tool:/),
        "assistant:Added milk to shopping.txt.",
      ]);
    } finally {
      await store.close();
    }
    fake.assertDone();
  });
});
