import { readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { Tool } from "../../src/tools/tool.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

let box: Sandbox;
let tools: Tool[];
const run = (name: string, args: Record<string, unknown>, turn = "turn-1") => runTool(byName(tools, name), args, ctxFor(box.workspace, turn));

beforeEach(async () => {
  box = await makeSandbox();
  tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home });
  await symlink(box.outside, path.join(box.workspace, "door"));
  await symlink(path.join(box.outside, "secret.txt"), path.join(box.workspace, "secret-link.txt"));
});
afterEach(async () => {
  await box.cleanup();
});

describe("path escapes are refused", () => {
  const escapes = () => [
    ["..", "../outside/secret.txt"],
    ["an absolute path", path.join(box.outside, "secret.txt")],
    ["~", "~/secret.txt"],
    ["a symlinked directory", "door/secret.txt"],
    ["a symlinked file", "secret-link.txt"],
    ["a dotted absolute path", `${box.workspace}/sub/../../outside/secret.txt`],
  ];

  it.each([0, 1, 2, 3, 4, 5])("read_file refuses escape #%i", async (i) => {
    const [, target = ""] = escapes()[i] ?? [];
    const result = await run("read_file", { path: target });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Error: access denied: '.+' resolves to .+, which is outside the workspace/);
    expect(result.text).not.toContain("secret\n");
  });

  it("write_file cannot create a file through a symlinked directory", async () => {
    const result = await run("write_file", { path: "door/new.txt", content: "x" });
    expect(result.isError).toBe(true);
    await expect(readFile(path.join(box.outside, "new.txt"))).rejects.toThrow();
  });

  it("every file tool checks its path", async () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ["write_file", { path: "../outside/x.txt", content: "x" }],
      ["edit_file", { path: "../outside/secret.txt", old_text: "top", new_text: "no" }],
      ["list_dir", { path: ".." }],
      ["find_files", { pattern: "*", path: "/" }],
      ["grep", { pattern: "secret", path: "door" }],
    ];
    for (const [name, args] of calls) {
      const result = await run(name, args);
      expect(result.isError, name).toBe(true);
      expect(result.text, name).toMatch(/access denied/);
    }
    expect(await readFile(path.join(box.outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("allows paths inside the workspace, absolute or relative", async () => {
    expect((await run("read_file", { path: path.join(box.workspace, "notes.txt") })).text).toMatch(/^1\| alpha/);
    expect((await run("read_file", { path: "sub/../notes.txt" })).text).toMatch(/^1\| alpha/);
  });
});

describe("violation escalation", () => {
  it("the third attempt on the same target in a turn gets a firmer message", async () => {
    const first = await run("read_file", { path: "../outside/secret.txt" });
    const second = await run("read_file", { path: path.join(box.outside, "secret.txt") });
    const third = await run("read_file", { path: "door/secret.txt" });
    expect(first.text).toMatch(/Use paths inside the workspace\.$/);
    expect(second.text).toMatch(/Use paths inside the workspace\.$/);
    expect(third.text).toMatch(/This is attempt 3 on this path in this turn\./);
    expect(third.text).toMatch(/Stop trying to reach this path/);
  });

  it("counts per turn", async () => {
    await run("read_file", { path: "../outside/secret.txt" }, "turn-a");
    await run("read_file", { path: "../outside/secret.txt" }, "turn-a");
    const other = await run("read_file", { path: "../outside/secret.txt" }, "turn-b");
    expect(other.text).not.toMatch(/attempt/);
  });
});

describe("configuration", () => {
  it("extra roots are allowed", async () => {
    tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home, extraRoots: [box.outside] });
    expect((await run("read_file", { path: path.join(box.outside, "secret.txt") })).text).toMatch(/^1\| top secret/);
    expect((await run("read_file", { path: "~/secret.txt" })).isError).toBe(true);
  });

  it("without restrictToWorkspace paths resolve freely, ~ expanded", async () => {
    tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: false, home: box.home });
    expect((await run("read_file", { path: "~/secret.txt" })).text).toMatch(/^1\| home secret/);
    expect((await run("read_file", { path: "door/secret.txt" })).text).toMatch(/^1\| top secret/);
  });
});
