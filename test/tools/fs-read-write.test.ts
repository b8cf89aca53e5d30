import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { READ_MAX_CHARS } from "../../src/tools/builtin/fs-read.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { Tool } from "../../src/tools/tool.js";
import { minimalPdf } from "./fixtures/minimal-pdf.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

let box: Sandbox;
let tools: Tool[];
const run = (name: string, args: Record<string, unknown>) => runTool(byName(tools, name), args, ctxFor(box.workspace));

beforeEach(async () => {
  box = await makeSandbox();
  tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home });
});
afterEach(async () => {
  await box.cleanup();
});

const lines = (n: number, make: (i: number) => string = (i) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => make(i + 1)).join("\n") + "\n";

describe("read_file", () => {
  it("returns numbered lines and says where the file ends", async () => {
    const result = await run("read_file", { path: "notes.txt" });
    expect(result.text).toBe("1| alpha\n2| beta\n3| foo\n\n(End of the file: 3 lines.)");
    expect(byName(tools, "read_file").readOnly).toBe(true);
  });

  it("returns 2,000 lines by default and tells how to read on", async () => {
    await writeFile(path.join(box.workspace, "big.txt"), lines(5000));
    const result = await run("read_file", { path: "big.txt" });
    const body = result.text.split("\n\n(")[0]?.split("\n") ?? [];
    expect(body).toHaveLength(2000);
    expect(body[1999]).toBe("2000| line 2000");
    expect(result.text).toMatch(/Showing lines 1-2000 of the file\. More lines follow: call read_file with offset=2001 to continue\./);
  });

  it("honours a 1-based offset and a limit", async () => {
    await writeFile(path.join(box.workspace, "big.txt"), lines(5000));
    const result = await run("read_file", { path: "big.txt", offset: 4999, limit: 10 });
    expect(result.text).toBe("4999| line 4999\n5000| line 5000\n\n(End of the file: 5,000 lines.)");
  });

  it("caps output at 128,000 characters with a note on the next offset", async () => {
    await writeFile(path.join(box.workspace, "wide.txt"), lines(1900, (i) => `${i} ${"w".repeat(100)}`));
    const result = await run("read_file", { path: "wide.txt" });
    const [body = "", note = ""] = result.text.split("\n\n(");
    expect(body.length).toBeLessThanOrEqual(READ_MAX_CHARS);
    const last = Number(/(\d+)\| \d+ w+$/.exec(body)?.[1]);
    expect(last).toBeGreaterThan(1000);
    expect(note).toBe(`Output capped at 128,000 characters after line ${last}. Call read_file with offset=${last + 1} to read on.)`);
  });

  it("cuts a single line longer than the cap", async () => {
    await writeFile(path.join(box.workspace, "min.js"), "x".repeat(200_000));
    const result = await run("read_file", { path: "min.js" });
    expect(result.text).toContain("[line 1 truncated at 128,000 characters]");
    expect(result.text.length).toBeLessThan(READ_MAX_CHARS + 200);
  });

  it("refuses binary files clearly", async () => {
    await writeFile(path.join(box.workspace, "img.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
    const result = await run("read_file", { path: "img.png" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Error: img\.png is a binary file \(12 bytes\); read_file only reads text\./);
  });

  it("reads PDFs as text", async () => {
    await writeFile(path.join(box.workspace, "doc.pdf"), minimalPdf("Hello from a PDF"));
    const result = await run("read_file", { path: "doc.pdf" });
    expect(result.isError).toBe(false);
    expect(result.text).toContain("Hello from a PDF");
    expect(result.text).toMatch(/^1\| /);
  });

  it("explains missing files, directories, empty files and offsets past the end", async () => {
    expect((await run("read_file", { path: "nope.txt" })).text).toBe("Error: file not found: nope.txt");
    expect((await run("read_file", { path: "sub" })).text).toMatch(/is a directory\. Use list_dir/);
    await writeFile(path.join(box.workspace, "empty.txt"), "");
    expect((await run("read_file", { path: "empty.txt" })).text).toBe("(empty.txt is empty)");
    const past = await run("read_file", { path: "notes.txt", offset: 10 });
    expect(past).toMatchObject({ isError: true, text: "Error: offset 10 is past the end of notes.txt (3 lines)." });
  });

  it("validates its arguments with readable errors", async () => {
    const result = await run("read_file", { path: "notes.txt", offset: 0 });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Invalid arguments for read_file:\n- offset: /);
    expect((await run("read_file", {})).text).toMatch(/- path: /);
  });
});

describe("write_file", () => {
  it("creates missing parent directories", async () => {
    const result = await run("write_file", { path: "a/b/c/new.txt", content: "héllo" });
    expect(result.text).toBe("Created a/b/c/new.txt (6 bytes).");
    expect(await readFile(path.join(box.workspace, "a/b/c/new.txt"), "utf8")).toBe("héllo");
  });

  it("overwrites an existing file and refuses a directory", async () => {
    expect((await run("write_file", { path: "notes.txt", content: "new" })).text).toBe("Overwrote notes.txt (3 bytes).");
    expect(await readFile(path.join(box.workspace, "notes.txt"), "utf8")).toBe("new");
    expect((await run("write_file", { path: "sub", content: "x" })).isError).toBe(true);
    expect(byName(tools, "write_file").readOnly).not.toBe(true);
  });
});

describe("edit_file", () => {
  const code = "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n";
  beforeEach(async () => {
    await writeFile(path.join(box.workspace, "code.js"), code);
  });
  const read = () => readFile(path.join(box.workspace, "code.js"), "utf8");

  it("replaces an exact, unique match", async () => {
    const result = await run("edit_file", { path: "code.js", old_text: "  return 2;", new_text: "  return 42;" });
    expect(result.text).toBe("Edited code.js: replaced 1 occurrence (first at line 6).");
    expect(await read()).toBe(code.replace("return 2;", "return 42;"));
  });

  it("refuses an ambiguous match and names the lines", async () => {
    await writeFile(path.join(box.workspace, "code.js"), "x = 1;\ny = 2;\nx = 1;\n");
    const result = await run("edit_file", { path: "code.js", old_text: "x = 1;", new_text: "x = 3;" });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      "Error: old_text occurs 2 times in code.js (at lines 1, 3). Include more surrounding context so it matches exactly once, or set replace_all to true.",
    );
    expect(await read()).toBe("x = 1;\ny = 2;\nx = 1;\n");
  });

  it("replaces every occurrence with replace_all", async () => {
    const result = await run("edit_file", { path: "code.js", old_text: "function", new_text: "fn", replace_all: true });
    expect(result.text).toMatch(/replaced 2 occurrences/);
    expect(await read()).toBe(code.replaceAll("function", "fn"));
  });

  it("shows the closest match when the text is missing", async () => {
    const result = await run("edit_file", { path: "code.js", old_text: "function b() {\n    return 2;\n}", new_text: "x" });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("Error: old_text was not found in code.js.");
    expect(result.text).toContain("The closest match is at lines 5-7");
    expect(result.text).toContain("```\nfunction b() {\n  return 2;\n}\n```");
    expect(await read()).toBe(code);
  });

  it("matches a file with CRLF line endings", async () => {
    await writeFile(path.join(box.workspace, "code.js"), "a\r\nb\r\nc\r\n");
    await run("edit_file", { path: "code.js", old_text: "a\nb", new_text: "A\nB" });
    expect(await read()).toBe("A\r\nB\r\nc\r\n");
  });

  it("says when the file does not exist", async () => {
    expect((await run("edit_file", { path: "missing.js", old_text: "a", new_text: "b" })).text).toMatch(/file not found: missing\.js\. Use write_file/);
  });
});

describe("tool flags", () => {
  it("marks the read-only file tools readOnly and the writers not", async () => {
    await mkdir(path.join(box.workspace, "x"), { recursive: true });
    const flags = Object.fromEntries(tools.map((t) => [t.name, t.readOnly === true]));
    expect(flags).toMatchObject({ read_file: true, list_dir: true, find_files: true, grep: true, web_fetch: true, web_search: true, write_file: false, edit_file: false, exec: false });
  });
});
