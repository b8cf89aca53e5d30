import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { Tool } from "../../src/tools/tool.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

let box: Sandbox;
let tools: Tool[];
const run = (name: string, args: Record<string, unknown>) => runTool(byName(tools, name), args, ctxFor(box.workspace));
const put = async (rel: string, content = "") => {
  await mkdir(path.dirname(path.join(box.workspace, rel)), { recursive: true });
  await writeFile(path.join(box.workspace, rel), content);
};

beforeEach(async () => {
  box = await makeSandbox();
  tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home });
  await put("src/a.ts", "export const a = 1;\n// TODO: more\n");
  await put("src/lib/b.ts", "export const b = 2;\n");
  await put("src/lib/b.test.ts", "test('b');\n");
  await put("node_modules/pkg/index.ts", "export const hidden = 1; // TODO\n");
  await put(".git/config", "[core] TODO\n");
});
afterEach(async () => {
  await box.cleanup();
});

describe("list_dir", () => {
  it("lists one level, sorted, with / on directories and ignored dirs left out", async () => {
    const result = await run("list_dir", {});
    expect(result.text).toBe("memory/\nnotes.txt\nsrc/\nsub/");
  });

  it("lists recursively", async () => {
    const result = await run("list_dir", { path: "src", recursive: true });
    expect(result.text).toBe("a.ts\nlib/\nlib/b.test.ts\nlib/b.ts");
  });

  it("shows .git and node_modules only when asked", async () => {
    const result = await run("list_dir", { recursive: true, include_ignored: true });
    expect(result.text.split("\n")).toEqual(expect.arrayContaining([".git/", ".git/config", "node_modules/pkg/index.ts"]));
  });

  it("shows at most 200 entries and counts the rest", async () => {
    await Promise.all(Array.from({ length: 250 }, (_, i) => put(`many/f${String(i).padStart(3, "0")}.txt`)));
    const result = await run("list_dir", { path: "many" });
    const [body = "", note = ""] = result.text.split("\n\n");
    expect(body.split("\n")).toHaveLength(200);
    expect(note).toBe("(Showing 200 of 250 entries; 50 not shown. List a subdirectory or use find_files to narrow down.)");
  });

  it("explains empty directories, files and missing paths", async () => {
    expect((await run("list_dir", { path: "sub" })).text).toBe("(sub is empty)");
    expect((await run("list_dir", { path: "notes.txt" })).text).toMatch(/is not a directory/);
    expect((await run("list_dir", { path: "nope" })).text).toBe("Error: directory not found: nope");
    // find_files shares the directory check and its messages.
    expect((await run("find_files", { pattern: "*", path: "notes.txt" })).text).toBe("Error: notes.txt is not a directory. Use read_file to read a file.");
    expect((await run("find_files", { pattern: "*", path: "nope" })).text).toBe("Error: directory not found: nope");
  });
});

describe("find_files", () => {
  it("matches a name glob at any depth, skipping node_modules", async () => {
    expect((await run("find_files", { pattern: "*.ts" })).text).toBe("src/a.ts\nsrc/lib/b.test.ts\nsrc/lib/b.ts");
  });

  it("matches path globs", async () => {
    expect((await run("find_files", { pattern: "src/**/*.test.ts" })).text).toBe("src/lib/b.test.ts");
    expect((await run("find_files", { pattern: "**/index.ts", include_ignored: true })).text).toBe("node_modules/pkg/index.ts");
  });

  it("stops at max_results and says so", async () => {
    const result = await run("find_files", { pattern: "*.ts", max_results: 2 });
    expect(result.text).toBe("src/a.ts\nsrc/lib/b.test.ts\n\n(Stopped at 2 results; narrow the pattern or raise max_results.)");
  });

  it("reports no matches", async () => {
    expect((await run("find_files", { pattern: "*.rs" })).text).toBe('No paths match "*.rs" in ..');
  });
});

describe("grep", () => {
  it("finds regex matches with file and line, skipping .git and node_modules", async () => {
    expect((await run("grep", { pattern: "TODO" })).text).toBe("src/a.ts:2: // TODO: more");
  });

  it("ignores case when asked", async () => {
    expect((await run("grep", { pattern: "todo" })).text).toMatch(/^No matches/);
    expect((await run("grep", { pattern: "todo", case_insensitive: true })).text).toBe("src/a.ts:2: // TODO: more");
  });

  it("shows context lines and separates groups", async () => {
    await put("ctx.txt", lines(20));
    const result = await run("grep", { pattern: "^line (5|15)$", path: "ctx.txt", context: 1 });
    expect(result.text).toBe("ctx.txt-4- line 4\nctx.txt:5: line 5\nctx.txt-6- line 6\n--\nctx.txt-14- line 14\nctx.txt:15: line 15\nctx.txt-16- line 16");
  });

  it("filters files with a glob", async () => {
    expect((await run("grep", { pattern: "export", glob: "*.test.ts" })).text).toMatch(/^No matches/);
    expect((await run("grep", { pattern: "export const b", glob: "src/lib/*.ts" })).text).toBe("src/lib/b.ts:1: export const b = 2;");
  });

  it("stops at 250 matches", async () => {
    await put("many.txt", lines(300, (i) => `hit ${i}`));
    const result = await run("grep", { pattern: "hit", path: "many.txt" });
    const [body = "", note = ""] = result.text.split("\n\n");
    expect(body.split("\n")).toHaveLength(250);
    expect(note).toBe("(Stopped at 250 matches; narrow the pattern, path or glob.)");
  });

  it("caps output at 128,000 characters", async () => {
    await put("wide.txt", lines(300, () => `hit ${"y".repeat(495)}`));
    const result = await run("grep", { pattern: "hit", path: "wide.txt" });
    const [body = "", note = ""] = result.text.split("\n\n");
    expect(body.length).toBeLessThanOrEqual(128_000);
    expect(body.split("\n").length).toBeLessThan(250);
    expect(note).toBe("(Output capped at 128,000 characters; narrow the pattern, path or glob.)");
  });

  it("skips binary files and reports bad regexes", async () => {
    await writeFile(path.join(box.workspace, "blob.bin"), Buffer.from("TODO\0\0\0binary"));
    expect((await run("grep", { pattern: "TODO" })).text).toBe("src/a.ts:2: // TODO: more\n\n(1 binary file(s) skipped.)");
    const bad = await run("grep", { pattern: "(" });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^Error: invalid regular expression/);
  });
});

function lines(n: number, make: (i: number) => string = (i) => `line ${i}`): string {
  return Array.from({ length: n }, (_, i) => make(i + 1)).join("\n") + "\n";
}
