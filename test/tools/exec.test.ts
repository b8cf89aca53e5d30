import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXEC_OUTPUT_CAP } from "../../src/tools/builtin/exec.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { HeadTailBuffer } from "../../src/tools/builtin/output-buffer.js";
import type { Tool } from "../../src/tools/tool.js";
import { ALLOWED_COMMANDS } from "./fixtures/exec-corpus.js";
import { BWRAP, describeWithBwrap, processesWith, survivorsOf, uniqueSleep } from "./exec-helpers.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

let box: Sandbox;
let exec: Tool;
beforeAll(async () => {
  box = await makeSandbox();
  exec = byName(createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home }), "exec");
});
afterAll(async () => {
  await box.cleanup();
});

describeWithBwrap("exec runs allowed commands (sandboxed)", () => {
  it.each(ALLOWED_COMMANDS.map((c) => [c.command, c] as const))("runs %j", async (_label, entry) => {
    const tool = entry.allowPatterns
      ? byName(createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: true, home: box.home, exec: { allowPatterns: entry.allowPatterns } }), "exec")
      : exec;
    const result = await runTool(tool, { command: entry.command }, ctxFor(box.workspace));
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(/Exit code: 0$/);
    if (typeof entry.expect === "string") expect(result.text).toContain(entry.expect);
    else expect(result.text).toMatch(entry.expect);
  });
});

describeWithBwrap("exec results", () => {
  it("reports a non-zero exit code and stderr", async () => {
    const result = await runTool(exec, { command: "echo oops >&2; exit 3" }, ctxFor(box.workspace));
    expect(result.text).toBe("oops\n\n\nExit code: 3");
  });

  it("says when there was no output", async () => {
    expect((await runTool(exec, { command: "true" }, ctxFor(box.workspace))).text).toBe("(no output)\n\nExit code: 0");
  });

  it("runs in the workspace, or in working_dir inside it", async () => {
    expect((await runTool(exec, { command: "pwd" }, ctxFor(box.workspace))).text).toContain(`${box.workspace}\n`);
    expect((await runTool(exec, { command: "pwd", working_dir: "sub" }, ctxFor(box.workspace))).text).toContain(path.join(box.workspace, "sub"));
    const escaped = await runTool(exec, { command: "pwd", working_dir: "../outside" }, ctxFor(box.workspace));
    expect(escaped.isError).toBe(true);
    expect(escaped.text).toMatch(/access denied/);
  });

  it("validates the timeout range 1-600", async () => {
    for (const timeout of [0, 601, 1.5]) {
      const result = await runTool(exec, { command: "true", timeout }, ctxFor(box.workspace));
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/^Invalid arguments for exec:\n- timeout: /);
    }
  });

  it("is exclusive and advertises its limits", () => {
    expect(exec.exclusive).toBe(true);
    expect(exec.readOnly).not.toBe(true);
    expect(exec.description).toMatch(/10,000 characters/);
    expect(exec.parameters).toMatchObject({ type: "object", properties: { timeout: { minimum: 1, maximum: 600 } }, required: ["command"] });
  });
});

/** The same kill guarantees with the sandbox and without it. */
const KILL_MODES = [
  // setsid leaves the process group; only the sandbox's PID namespace takes such a process down.
  { mode: "bwrap", escapes: "setsid sleep NAP & ", make: () => exec },
  { mode: "none", escapes: "", make: () => byName(createBuiltinTools({ workspace: box.workspace, restrictToWorkspace: false, home: box.home, exec: { sandbox: "none" } }), "exec") },
] as const;

describe.each(KILL_MODES.filter((m) => m.mode === "none" || BWRAP.available))("exec kills the whole process tree (sandbox $mode)", ({ escapes, make }) => {
  it("on timeout, no child survives (background jobs and nohup included)", async () => {
    const nap = uniqueSleep();
    const command = `sleep ${nap} & sleep ${nap} & ${escapes.replace("NAP", nap)}nohup sleep ${nap} >/dev/null 2>&1 & echo started; wait`;
    const result = await runTool(make(), { command, timeout: 1 }, ctxFor(box.workspace));
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/started[\s\S]*timed out after 1 s/);
    expect(await survivorsOf(`sleep ${nap}`)).toEqual([]);
  });

  it("on abort, no child survives", async () => {
    const nap = uniqueSleep();
    const marker = path.join(box.workspace, `started-${nap}`);
    const controller = new AbortController();
    const command = `sleep ${nap} & sleep ${nap} & touch ${path.basename(marker)}; wait`;
    const running = runTool(make(), { command }, ctxFor(box.workspace), controller.signal);
    for (let i = 0; i < 500 && !existsSync(marker); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(processesWith(`sleep ${nap}`).length).toBeGreaterThanOrEqual(2);
    controller.abort();
    const result = await running;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/aborted/);
    expect(await survivorsOf(`sleep ${nap}`)).toEqual([]);
  });
});

describeWithBwrap("exec output cap, for real", () => {
  it("caps 10 MB of output, keeping head and tail with an elided count", async () => {
    const command = "echo START; head -c 10000000 /dev/zero | tr '\\0' 'a'; echo; echo END";
    const result = await runTool(exec, { command }, ctxFor(box.workspace));
    const [output = ""] = result.text.split("\n\nExit code: ");
    expect(result.text).toMatch(/Exit code: 0$/);
    expect(output.startsWith("START\naaaa")).toBe(true);
    expect(output.endsWith("aaaa\nEND\n")).toBe(true);
    expect(output).toMatch(/\[9,99\d,\d{3} characters elided; 10,000,01\d in total\]/);
    expect(output.length).toBeLessThanOrEqual(EXEC_OUTPUT_CAP + 100);
  });

});

describe("exec output buffer", () => {
  it("never holds much more than the cap while streaming", () => {
    const buffer = new HeadTailBuffer(1_000);
    const chunk = "x".repeat(65_536);
    let peak = 0;
    for (let i = 0; i < 160; i += 1) {
      buffer.push(i === 0 ? `HEAD${chunk}` : i === 159 ? `${chunk}TAIL` : chunk);
      peak = Math.max(peak, buffer.retainedChars);
    }
    expect(peak).toBeLessThanOrEqual(1_000 + 2 * 65_540);
    const text = buffer.toString();
    expect(text.startsWith("HEADxxx")).toBe(true);
    expect(text.endsWith("xxxTAIL")).toBe(true);
    expect(text).toContain(`[${(160 * 65_536 + 8 - 1_000).toLocaleString("en-US")} characters elided`);
  });

  it("returns short output unchanged", () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push("abc");
    buffer.push("defghij");
    expect(buffer.toString()).toBe("abcdefghij");
  });
});
