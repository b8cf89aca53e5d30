import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerSessionsCommand } from "../../src/cli/commands/sessions.js";
import { createContext } from "../../src/cli/context.js";
import { SqliteSessionStore } from "../../src/session/index.js";
import { plainTurn } from "./helpers/temp-store.js";

const PY_FILE = fileURLToPath(new URL("./fixtures/python-session.jsonl", import.meta.url));
let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-sessions-cli-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Runs `nanobot sessions …` in-process against NANOBOT_HOME=<root>/home. */
async function run(...args: string[]): Promise<{ out: string; err: string; error?: Error }> {
  let out = "";
  let err = "";
  const ctx = createContext(
    { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: { NANOBOT_HOME: join(root, "home") }, cwd: root },
    "0.0.0-test",
  );
  const program = new Command("nanobot").exitOverride().configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (err += s) });
  registerSessionsCommand(program, ctx);
  try {
    await program.parseAsync(["node", "nanobot", "sessions", ...args], { from: "node" });
    return { out, err };
  } catch (error) {
    return { out, err, error: error as Error };
  }
}

describe("nanobot sessions", () => {
  it("list and show report nothing (and create no database) on a fresh home", async () => {
    expect((await run("list")).out).toBe("no sessions\n");
    expect(JSON.parse((await run("list", "--json")).out)).toEqual([]);
    expect((await run("show", "cli:direct")).error?.message).toBe('no session "cli:direct"');
    expect(existsSync(join(root, "home", "state.db"))).toBe(false);
  });

  it("import, list, show and export a Python session file", async () => {
    const imported = await run("import", PY_FILE);
    expect(imported.out).toBe("imported 8 messages into telegram:8812345\n");

    const list = await run("list");
    expect(list.out.split("\n")[0]).toMatch(/^KEY\s+MESSAGES\s+UPDATED\s+TITLE$/);
    expect(list.out).toMatch(/telegram:8812345\s+8\s+\S+\s+Trip planning/);
    const json = JSON.parse((await run("list", "--json")).out) as Array<Record<string, unknown>>;
    expect(json).toEqual([expect.objectContaining({ key: "telegram:8812345", messageCount: 8, metadata: { title: "Trip planning", lang: "en" } })]);

    const show = await run("show", "telegram:8812345");
    expect(show.out).toContain("[assistant] (thinking: 44 chars) → web_search(");
    expect(show.out).toContain("[tool] web_search call_9f2a: 1. EC 171");
    const shown = JSON.parse((await run("show", "telegram:8812345", "--json")).out) as { messages: unknown[]; threads: unknown[] };
    expect(shown.messages).toHaveLength(8);
    expect(shown.threads).toHaveLength(1);

    const exported = await run("export", "telegram:8812345");
    const lines = exported.out.trimEnd().split("\n");
    expect(lines).toHaveLength(9);
    const original = (await readFile(PY_FILE, "utf8")).trimEnd().split("\n");
    expect(lines.slice(1).map((l) => JSON.parse(l) as unknown)).toEqual(original.slice(1).map((l) => JSON.parse(l) as unknown));

    await run("export", "telegram:8812345", "-o", "out.jsonl");
    expect(await readFile(join(root, "out.jsonl"), "utf8")).toBe(exported.out);
    const again = await run("import", "out.jsonl", "--key", "cli:copy");
    expect(again.out).toBe("imported 8 messages into cli:copy\n");
  });

  it("shows a session written by the store", async () => {
    const store = new SqliteSessionStore({ home: join(root, "home") });
    await plainTurn(store, "cli:direct", "ping", "pong");
    await store.close();
    expect((await run("show", "cli:direct")).out).toContain("[user] ping\n[assistant] pong\n");
    expect((await run("export", "nope:1")).error?.message).toBe('no session "nope:1"');
  });
});
