/**
 * Issue 18, item 4: the file tools cannot be led outside the workspace by a dangling link, and
 * `memory/history.jsonl` cannot be written by any file tool, whatever the spelling. Real files
 * and real links in a temp directory, through the real tools.
 */
import { link, mkdir, readdir, readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { Tool } from "../../src/tools/tool.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

let box: Sandbox;
let tools: Tool[];
const run = (name: string, args: Record<string, unknown>) => runTool(byName(tools, name), args, ctxFor(box.workspace));
const HISTORY = '{"role":"user"}\n{"role":"assistant"}\n{"role":"user"}\n';

beforeEach(async () => {
  box = await makeSandbox();
  tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home });
});
afterEach(async () => {
  await box.cleanup();
});

describe("dangling links are resolved before writing", () => {
  it("write_file through ws/link -> /outside/newfile is refused and creates nothing outside", async () => {
    await symlink(path.join(box.outside, "newfile"), path.join(box.workspace, "link"));
    const result = await run("write_file", { path: "link", content: "pwned" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(new RegExp(`^Error: access denied: 'link' resolves to ${box.outside}/newfile, which is outside the workspace`));
    expect(await readdir(box.outside)).toEqual(["secret.txt"]);
  });

  it("a chain of links ending at a missing file outside is refused too", async () => {
    await symlink(path.join(box.outside, "deep", "newfile"), path.join(box.workspace, "sub", "hop2"));
    await symlink("sub/hop2", path.join(box.workspace, "hop1"));
    const result = await run("write_file", { path: "hop1", content: "pwned" });
    expect(result.text).toMatch(/^Error: access denied: 'hop1' resolves to .*\/outside\/deep\/newfile/);
    expect(await readdir(box.outside)).toEqual(["secret.txt"]);
  });

  it("a dangling link inside a linked directory is followed to its real target", async () => {
    await symlink(box.outside, path.join(box.workspace, "door"));
    const result = await run("write_file", { path: "door/new.txt", content: "pwned" });
    expect(result.isError).toBe(true);
    expect(await readdir(box.outside)).toEqual(["secret.txt"]);
  });

  it("edit_file through a link to an outside file is refused and leaves it unchanged", async () => {
    await symlink(path.join(box.outside, "secret.txt"), path.join(box.workspace, "edit-link"));
    const result = await run("edit_file", { path: "edit-link", old_text: "top", new_text: "no" });
    expect(result.text).toMatch(/^Error: access denied: 'edit-link' resolves to/);
    expect(await readFile(path.join(box.outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("a dangling link whose target is inside the workspace is written there", async () => {
    await symlink("sub/target.txt", path.join(box.workspace, "inner-link"));
    expect((await run("write_file", { path: "inner-link", content: "hello" })).text).toBe("Created inner-link (5 bytes).");
    expect(await readFile(path.join(box.workspace, "sub", "target.txt"), "utf8")).toBe("hello");
    expect((await run("edit_file", { path: "inner-link", old_text: "hello", new_text: "bye" })).isError).toBe(false);
    expect((await run("read_file", { path: "inner-link" })).text).toContain("1| bye");
  });

  it("a link loop is a clear error", async () => {
    await symlink("loop-b", path.join(box.workspace, "loop-a"));
    await symlink("loop-a", path.join(box.workspace, "loop-b"));
    const result = await run("write_file", { path: "loop-a", content: "x" });
    expect(result.text).toMatch(/^Error: loop-a: too many levels of symbolic links/);
  });

  it("read_file, write_file and edit_file refuse a FIFO without waiting on it", async () => {
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [path.join(box.workspace, "pipe")]);
    expect((await run("read_file", { path: "pipe" })).text).toMatch(/is not a regular file/);
    expect((await run("write_file", { path: "pipe", content: "x" })).text).toMatch(/is not a regular file/);
    expect((await run("edit_file", { path: "pipe", old_text: "a", new_text: "b" })).text).toMatch(/is not a regular file/);
  });
});

describe("memory/history.jsonl is protected for every file tool", () => {
  const spellings = () => [
    "memory/history.jsonl",
    "./memory/../memory/history.jsonl",
    "memory//history.jsonl",
    path.join(box.workspace, "memory", "history.jsonl"),
    "hist-link",
    "memlink/history.jsonl",
    "hard-link.jsonl",
  ];
  beforeEach(async () => {
    await symlink("memory/history.jsonl", path.join(box.workspace, "hist-link"));
    await symlink("memory", path.join(box.workspace, "memlink"));
    await link(path.join(box.workspace, "memory", "history.jsonl"), path.join(box.workspace, "hard-link.jsonl"));
  });

  it.each([0, 1, 2, 3, 4, 5, 6])("write_file refuses spelling #%i and the file is unchanged", async (i) => {
    const target = spellings()[i] as string;
    const result = await run("write_file", { path: target, content: "overwritten" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/is memory\/history\.jsonl, which nanobot maintains itself/);
    expect(await readFile(path.join(box.workspace, "memory", "history.jsonl"), "utf8")).toBe(HISTORY);
  });

  it.each([0, 1, 2, 3, 4, 5, 6])("edit_file refuses spelling #%i and the file is unchanged", async (i) => {
    const target = spellings()[i] as string;
    const result = await run("edit_file", { path: target, old_text: "assistant", new_text: "forged" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/is memory\/history\.jsonl, which nanobot maintains itself/);
    expect(await readFile(path.join(box.workspace, "memory", "history.jsonl"), "utf8")).toBe(HISTORY);
  });

  it("is refused without restrictToWorkspace too, and stays readable", async () => {
    tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: false, home: box.home });
    expect((await run("write_file", { path: "memory/history.jsonl", content: "x" })).text).toMatch(/which nanobot maintains itself/);
    expect((await run("read_file", { path: "memory/history.jsonl" })).text).toContain('2| {"role":"assistant"}');
    expect((await run("write_file", { path: "memory/MEMORY.md", content: "notes" })).text).toBe("Created memory/MEMORY.md (5 bytes).");
  });

  it("is refused before anything is created when the history file does not exist yet", async () => {
    const fresh = path.join(box.root, "fresh-ws");
    await mkdir(fresh);
    tools = createBuiltinTools({ workspace: fresh, restrictToWorkspace: true, home: box.home });
    const result = await runTool(byName(tools, "write_file"), { path: "memory/history.jsonl", content: "x" }, ctxFor(fresh));
    expect(result.text).toMatch(/which nanobot maintains itself/);
    expect(await readdir(fresh)).toEqual([]);
  });

  it("exec's list and the file tools' list are one definition", async () => {
    const { DEFAULT_PROTECTED_PATHS: fromExec } = await import("../../src/tools/builtin/exec-deny-rules.js");
    const { DEFAULT_PROTECTED_PATHS: fromFiles } = await import("../../src/tools/builtin/fs-protected.js");
    expect(fromExec).toBe(fromFiles);
    expect(fromFiles).toEqual(["memory/history.jsonl"]);
  });
});

describe("writes create through checked directories", () => {
  it("write_file creates missing directories inside the workspace", async () => {
    expect((await run("write_file", { path: "a/b/c/new.txt", content: "deep" })).text).toBe("Created a/b/c/new.txt (4 bytes).");
    expect(await readFile(path.join(box.workspace, "a", "b", "c", "new.txt"), "utf8")).toBe("deep");
  });

  it("a workspace that does not exist yet is created by the first write", async () => {
    const missing = path.join(box.root, "not-yet", "ws");
    tools = createBuiltinTools({ workspace: missing, restrictToWorkspace: true, home: box.home });
    const result = await runTool(byName(tools, "write_file"), { path: "notes/a.txt", content: "first" }, ctxFor(missing));
    expect(result.text).toBe("Created notes/a.txt (5 bytes).");
    expect(await readFile(path.join(missing, "notes", "a.txt"), "utf8")).toBe("first");
  });

  it("a refused overwrite (a hard link to the history file) truncates nothing", async () => {
    await link(path.join(box.workspace, "memory", "history.jsonl"), path.join(box.workspace, "memory", "alias"));
    expect((await run("write_file", { path: "memory/alias", content: "" })).isError).toBe(true);
    expect(await readFile(path.join(box.workspace, "memory", "history.jsonl"), "utf8")).toBe(HISTORY);
  });
});
