/**
 * Issue 21, item 9, through the built CLI (`bin/nanobot.js`): a session and each of its threads
 * get a short title from the first user message; `sessions list` shows it (TITLE), `sessions
 * show --json` has it per thread, and `/history` is headed by it.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { titleFromText } from "../../src/session/title.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-titles-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-titles-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
    }),
  );
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function nanobot(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: root, env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: join(root, "home"), NO_COLOR: "1" }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

describe("titles from the first exchange", () => {
  it("sessions list shows the session's title; each thread keeps its own; /history is headed by it", async () => {
    fake.enqueue({ text: "Sure, May is lovely." }, { text: "About 2000 euros." }, { text: "Hello." }, { text: "Kyoto in autumn, then." });
    expect((await nanobot(["agent", "-m", "## Plan a **trip** to Lisbon in May with a budget of two thousand euros", "-s", "cli:trip"])).code).toBe(0);
    expect((await nanobot(["agent", "-m", "and how much would hotels cost?", "-s", "cli:trip"])).code).toBe(0);
    expect((await nanobot(["agent", "-m", "hi", "-s", "cli:other"])).code).toBe(0);

    const list = await nanobot(["sessions", "list"]);
    expect(list.code).toBe(0);
    const lines = list.out.trim().split("\n");
    expect(lines[0]).toMatch(/^KEY\s+MESSAGES\s+UPDATED\s+TITLE$/);
    expect(lines.find((l) => l.startsWith("cli:trip"))).toMatch(/ Plan a trip to Lisbon in May with a budget of…$/);
    expect(lines.find((l) => l.startsWith("cli:other"))).toMatch(/ hi$/);

    const history = await nanobot(["agent", "-m", "/history", "-s", "cli:trip"]);
    expect(history.out.split("\n")[0]).toBe("— Plan a trip to Lisbon in May with a budget of… —");

    // A new thread gets its own title; the session keeps its first one.
    expect((await nanobot(["agent", "-m", "/new", "-s", "cli:trip"])).code).toBe(0);
    expect((await nanobot(["agent", "-m", "What about Kyoto instead?", "-s", "cli:trip"])).code).toBe(0);
    const show = JSON.parse((await nanobot(["sessions", "show", "cli:trip", "--json"])).out) as {
      metadata: { title: string };
      threads: Array<{ title: string | null; current: boolean }>;
    };
    expect(show.metadata.title).toBe("Plan a trip to Lisbon in May with a budget of…");
    expect(show.threads.map((t) => [t.title, t.current])).toEqual([
      ["Plan a trip to Lisbon in May with a budget of…", false],
      ["What about Kyoto instead?", true],
    ]);
  });
});

describe("the title heuristic", () => {
  it("takes the first line that says something, without markdown, cut at a word", () => {
    expect(titleFromText("\n\n```js\nconst x = 1;\n```\nWhy does this fail?")).toBe("Why does this fail?");
    expect(titleFromText("- [ ] **fix** the `build`")).toBe("[ ] fix the build");
    expect(titleFromText("a".repeat(80))).toBe(`${"a".repeat(47)}…`);
    expect(titleFromText("   \n  ")).toBeUndefined();
  });
});
