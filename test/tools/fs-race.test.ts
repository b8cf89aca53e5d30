/**
 * Issue 18, item 4: a directory swapped for a symlink to an outside directory while the tools
 * read and write through it. A separate process swaps `ws/dir` between the real directory and
 * a link to `outside/` as fast as it can; the tools run thousands of times (a bounded count)
 * and must never return, list or create anything outside. A plain `readFile` of the same path,
 * run alongside, shows that the swap really lands during the reads.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { Tool } from "../../src/tools/tool.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

const READS = 2_000;
const WRITES = 400;
const GREPS = 200;

/** Swaps `dir` <-> a link to the outside directory with renames (each rename is atomic). */
const SWAPPER = `
const fs = require("node:fs");
const [ws] = process.argv.slice(1);
const dir = ws + "/dir", real = ws + "/.real", link = ws + "/.link";
process.send("ready");
for (let i = 0; i < 50_000_000; i += 1) {
  try {
    fs.renameSync(dir, real); fs.renameSync(link, dir);
    fs.renameSync(dir, link); fs.renameSync(real, dir);
  } catch {}
}
`;

let box: Sandbox;
let tools: Tool[];
let swapper: ChildProcess | undefined;
const run = (name: string, args: Record<string, unknown>) => runTool(byName(tools, name), args, ctxFor(box.workspace));

beforeEach(async () => {
  box = await makeSandbox();
  tools = createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home });
  await mkdir(path.join(box.workspace, "dir"));
  await writeFile(path.join(box.workspace, "dir", "secret"), "inside secret\n");
  await writeFile(path.join(box.outside, "secret"), "OUTSIDE SECRET\n");
  await symlink(box.outside, path.join(box.workspace, ".link"));
  swapper = spawn(process.execPath, ["-e", SWAPPER, box.workspace], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  await new Promise((resolve) => swapper?.once("message", resolve));
});
afterEach(async () => {
  if (swapper && swapper.exitCode === null) {
    const exited = new Promise((resolve) => swapper?.once("exit", resolve));
    swapper.kill("SIGKILL");
    await exited;
  }
  await box.cleanup();
});

describe("a directory <-> symlink swap during file-tool calls", () => {
  it(`read_file never returns the outside file in ${READS} reads`, async () => {
    const seen = { inside: 0, outside: 0, refused: 0, plainOutside: 0 };
    for (let i = 0; i < READS; i += 1) {
      const result = await run("read_file", { path: "dir/secret" });
      if (result.text.includes("OUTSIDE")) seen.outside += 1;
      else if (result.text.includes("inside secret")) seen.inside += 1;
      else seen.refused += 1;
      // The unguarded way, for comparison: it follows whatever `dir` is at that moment.
      const plain = await readFile(path.join(box.workspace, "dir", "secret"), "utf8").catch(() => "");
      if (plain.includes("OUTSIDE")) seen.plainOutside += 1;
    }
    console.log(`read race: ${JSON.stringify(seen)}`);
    expect(seen.outside).toBe(0);
    expect(seen.inside).toBeGreaterThan(0);
    // The swap landed during the run (some reads saw the link or the gap and were refused).
    expect(seen.refused + seen.plainOutside).toBeGreaterThan(0);
  });

  it(`write_file never creates a file outside in ${WRITES} writes`, async () => {
    let created = 0;
    for (let i = 0; i < WRITES; i += 1) {
      const result = await run("write_file", { path: `dir/new-${i}.txt`, content: "x" });
      if (!result.isError) created += 1;
    }
    expect(created).toBeGreaterThan(0);
    expect((await readdir(box.outside)).sort()).toEqual(["secret", "secret.txt"]);
  });

  it(`grep and list_dir never show the outside directory in ${GREPS} calls each`, async () => {
    let leaks = 0;
    for (let i = 0; i < GREPS; i += 1) {
      const grep = await run("grep", { pattern: "SECRET", path: "dir", case_insensitive: true });
      const list = await run("list_dir", { path: "dir" });
      if (grep.text.includes("OUTSIDE") || list.text.includes("secret.txt")) leaks += 1;
    }
    expect(leaks).toBe(0);
  });
});
