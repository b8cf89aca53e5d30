import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContextBuilder, SECTION_SEPARATOR } from "../../src/agent/context-builder.js";
import { HistoryLog } from "../../src/memory/history-log.js";
import { WORKSPACE_TEMPLATES } from "../../src/memory/templates.js";
import { ensureWorkspace } from "../../src/memory/workspace.js";

let root: string;
let workspace: string;
let builtin: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-context-"));
  workspace = join(root, "ws");
  builtin = join(root, "builtin");
  await mkdir(join(builtin, "notes"), { recursive: true });
  await writeFile(join(builtin, "notes", "SKILL.md"), "---\ndescription: Take notes\n---\n\nWrite notes to notes.md.\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const builder = (): ContextBuilder =>
  new ContextBuilder({ workspace, env: {}, timezone: "UTC", builtinSkillsDir: builtin, now: () => Date.UTC(2026, 0, 15, 9, 30) });

describe("workspace bootstrap", () => {
  it("creates the files from templates once and never overwrites edits", async () => {
    expect(ensureWorkspace(workspace).sort()).toEqual(Object.keys(WORKSPACE_TEMPLATES).sort());
    await writeFile(join(workspace, "USER.md"), "# User\n\nName: Ada\n");
    expect(ensureWorkspace(workspace)).toEqual([]);
    expect(await readFile(join(workspace, "USER.md"), "utf8")).toBe("# User\n\nName: Ada\n");
  });
});

describe("ContextBuilder", () => {
  it("skips untouched templates and orders stable parts before memory, history and runtime facts", async () => {
    ensureWorkspace(workspace);
    await writeFile(join(workspace, "USER.md"), "# User\n\nName: Ada\n");
    await writeFile(join(workspace, "memory", "MEMORY.md"), "# Memory\n\n- Ada likes tea\n");
    new HistoryLog(workspace).append("cli:x", "Ada asked about trains.");
    new HistoryLog(workspace).append("cli:other", "Someone else's chat.");
    const { system } = builder().build({ instructions: "You are nanobot.", sessionKey: "cli:x", channel: "cli", chatId: "x", userText: "hi" });
    const sections = system.split(SECTION_SEPARATOR);
    expect(sections[0]).toBe("You are nanobot.");
    expect(sections[1]).toBe("# USER.md\n\n# User\n\nName: Ada");
    expect(sections[2]).toMatch(/^# Using tools/);
    expect(sections[3]).toMatch(/^# Skills/);
    expect(sections[4]).toBe("# Memory (memory/MEMORY.md)\n\n# Memory\n\n- Ada likes tea");
    expect(sections[5]).toMatch(/^# Earlier in this conversation \(summarised\)\n\n- \[.*\] Ada asked about trains\.$/);
    expect(sections[6]).toContain("Current time: Thursday, January 15, 2026 at 9:30 AM (UTC)");
    expect(sections[6]).toContain("- Channel: cli\n- Chat: x\n- Session: cli:x");
    expect(system).not.toContain("SOUL.md");
    expect(system).not.toContain("Someone else's chat");
  });

  it("follows the workspace between turns: a file or skill created, edited or deleted shows in the next prompt", async () => {
    // No ensureWorkspace: nothing exists yet, as in a workspace the user laid out by hand.
    await mkdir(workspace, { recursive: true });
    const prompt = (): string => builder().build({ instructions: "x", sessionKey: "cli:x", userText: "hi" }).system;
    expect(prompt()).not.toContain("USER.md");
    await writeFile(join(workspace, "USER.md"), "# User\n\nName: Ada\n");
    expect(prompt()).toContain("Name: Ada");
    await writeFile(join(workspace, "USER.md"), "# User\n\nName: Grace, who goes by G\n");
    expect(prompt()).toContain("Name: Grace, who goes by G");
    await rm(join(workspace, "USER.md"));
    expect(prompt()).not.toContain("USER.md");
    expect(prompt()).not.toContain("Grace");
    await mkdir(join(workspace, "skills", "trains"), { recursive: true });
    await writeFile(join(workspace, "skills", "trains", "SKILL.md"), "---\ndescription: Look up train times\n---\n\nAsk the timetable.\n");
    expect(prompt()).toContain("Look up train times");
    await rm(join(workspace, "skills"), { recursive: true });
    expect(prompt()).not.toContain("Look up train times");
  });

  it("injects a skill named with $name in the message", () => {
    ensureWorkspace(workspace);
    const built = builder().build({ instructions: "x", sessionKey: "cli:x", userText: "use $notes please" });
    expect(built.injectedSkills).toEqual(["notes"]);
    expect(built.system).toContain("# Skill requested: notes\n\nWrite notes to notes.md.");
  });
});
