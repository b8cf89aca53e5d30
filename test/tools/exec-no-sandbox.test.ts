/**
 * exec when no sandbox can be had: bwrap missing, or present but unable to build a sandbox
 * (a stand-in bwrap that fails like one without user namespaces). It says so in its
 * description, fails closed with restrictToWorkspace (naming the package to install), and
 * still clears the environment.
 */
import { access, chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolsSchema } from "../../src/config/schema-tools.js";
import { execEnv } from "../../src/tools/builtin/exec-env.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { detectBwrap, probeBwrap } from "../../src/tools/builtin/sandbox-bwrap.js";
import { byName, ctxFor, runTool } from "./helpers.js";

let root: string;
let workspace: string;
/** A PATH with bash and a few tools but no bwrap. */
let bareBin: string;
/** A PATH whose bwrap fails the way it does without user namespaces. */
let brokenBin: string;

const TOOLS = ["bash", "env", "cut", "sort", "cat", "touch", "printenv", "sleep"];

function envWith(pathVar: string): NodeJS.ProcessEnv {
  return { PATH: pathVar, HOME: root, LANG: "C.UTF-8", OPENAI_API_KEY: "sk-test-secret", GITHUB_TOKEN: "ghp-visible", SOME_OTHER: "hidden" };
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nanobot-nosandbox-"));
  workspace = path.join(root, "ws");
  bareBin = path.join(root, "bare-bin");
  brokenBin = path.join(root, "broken-bin");
  await mkdir(workspace, { recursive: true });
  for (const dir of [bareBin, brokenBin]) {
    await mkdir(dir);
    for (const tool of TOOLS) await symlink(path.join("/usr/bin", tool), path.join(dir, tool));
  }
  await writeFile(path.join(brokenBin, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n");
  await chmod(path.join(brokenBin, "bwrap"), 0o755);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function execTool(pathVar: string, options: { restrict?: boolean; sandbox?: "auto" | "bwrap" | "none"; allowedEnvKeys?: string[] } = {}) {
  return byName(
    createBuiltinTools({
      workspace,
      restrictToWorkspace: options.restrict ?? false,
      env: envWith(pathVar),
      exec: { ...(options.sandbox ? { sandbox: options.sandbox } : {}), ...(options.allowedEnvKeys ? { allowedEnvKeys: options.allowedEnvKeys } : {}) },
    }),
    "exec",
  );
}

describe("detecting bwrap by trying it", () => {
  it("reports a missing bwrap and one that cannot build a sandbox, with bwrap's own words", () => {
    expect(detectBwrap(bareBin)).toEqual({ available: false, reason: "bubblewrap (bwrap) is not installed" });
    expect(detectBwrap(brokenBin)).toMatchObject({ available: false, reason: expect.stringMatching(/^bwrap cannot create a sandbox here: bwrap: No permissions to create new namespace/) });
  });

  it("probes without blocking to the same verdict, once: the exec tool built afterwards reuses it", async () => {
    // A PATH of its own (the verdict is cached per PATH), whose bwrap counts its runs.
    const countingBin = path.join(root, "counting-bin");
    const runs = path.join(root, "bwrap-runs");
    await mkdir(countingBin);
    for (const tool of TOOLS) await symlink(path.join("/usr/bin", tool), path.join(countingBin, tool));
    await writeFile(path.join(countingBin, "bwrap"), `#!/bin/sh\necho run >> '${runs}'\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n`);
    await chmod(path.join(countingBin, "bwrap"), 0o755);
    const verdict = await probeBwrap(countingBin);
    expect(verdict).toEqual({ available: false, bwrap: path.join(countingBin, "bwrap"), reason: "bwrap cannot create a sandbox here: bwrap: setting up uid map: Permission denied" });
    expect(await probeBwrap(countingBin)).toBe(verdict);
    const exec = execTool(countingBin);
    expect(exec.description).toContain("No sandbox (bwrap cannot create a sandbox here: bwrap: setting up uid map: Permission denied)");
    expect(await readFile(runs, "utf8")).toBe("run\n");
    expect(await probeBwrap(bareBin)).toEqual({ available: false, reason: "bubblewrap (bwrap) is not installed" });
  });
});

describe("no sandbox, restrictToWorkspace off", () => {
  it("runs, says in its description that it is unsandboxed, and clears the environment", async () => {
    const exec = execTool(bareBin, { allowedEnvKeys: ["GITHUB_TOKEN"] });
    expect(exec.description).toMatch(/No sandbox \(bubblewrap \(bwrap\) is not installed\): commands run with your full file access/);
    const result = await runTool(exec, { command: "env | cut -d= -f1 | sort; printenv GITHUB_TOKEN" }, ctxFor(workspace));
    expect(result.text).toBe("GITHUB_TOKEN\nHOME\nLANG\nPATH\nPWD\nSHLVL\n_\nghp-visible\n\n\nExit code: 0");
  });
});

describe("no sandbox: exec fails closed", () => {
  it.each([
    ["auto + restrictToWorkspace, bwrap missing", "bare", { restrict: true }, /tools\.restrictToWorkspace is true but no sandbox is available \(bubblewrap \(bwrap\) is not installed\)/],
    ["auto + restrictToWorkspace, bwrap broken", "broken", { restrict: true }, /no sandbox is available \(bwrap cannot create a sandbox here: bwrap: No permissions/],
    ['sandbox "bwrap", bwrap missing', "bare", { sandbox: "bwrap" }, /tools\.exec\.sandbox is "bwrap" but bubblewrap \(bwrap\) is not installed/],
    ['sandbox "none" + restrictToWorkspace', "bare", { restrict: true, sandbox: "none" }, /tools\.restrictToWorkspace is true and tools\.exec\.sandbox is "none"/],
  ] as const)("%s", async (_label, bin, options, message) => {
    // The folders exist only once beforeAll has run, so the table names them.
    const exec = execTool(bin === "bare" ? bareBin : brokenBin, options);
    expect(exec.description).toMatch(/^Run a bash command.*Unavailable here: exec is disabled/s);
    const result = await runTool(exec, { command: "touch ran.txt" }, ctxFor(workspace));
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(message);
    expect(result.text).toContain("apt-get install bubblewrap");
    await expect(access(path.join(workspace, "ran.txt"))).rejects.toThrow();
  });
});

describe("the environment and its config keys", () => {
  it("never passes a provider key, even when named", () => {
    const env = execEnv({ PATH: "/usr/bin", OPENAI_API_KEY: "sk-1", ANTHROPIC_AUTH_TOKEN: "t", FOO: "bar" }, { allowedEnvKeys: ["OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "FOO"], pathAppend: "/opt/tools/bin" });
    expect(env).toEqual({ PATH: "/usr/bin:/opt/tools/bin", FOO: "bar" });
  });

  it("validates tools.exec.sandbox, network and allowedEnvKeys with clear errors", () => {
    const issues = (exec: unknown) => {
      const parsed = toolsSchema.safeParse({ exec });
      return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(issues({ sandbox: "docker" })).toEqual(['exec.sandbox: expected "auto", "bwrap" or "none"']);
    expect(issues({ network: "yes" })).toEqual(["exec.network: expected true or false"]);
    expect(issues({ allowedEnvKeys: "FOO" })).toEqual(["exec.allowedEnvKeys: expected a list of strings"]);
    expect(issues({ allowedEnvKeys: ["FOO BAR"] })).toEqual(["exec.allowedEnvKeys: expected environment variable names"]);
    expect(issues({ allowedEnvKeys: ["OPENAI_API_KEY"] })).toEqual(["exec.allowedEnvKeys: expected variable names that are not provider keys (a *_API_KEY never reaches a command)"]);
  });

  it("reads the Python nanobot's spellings: an empty sandbox is unset, booleans mean bwrap/none", () => {
    const sandbox = (value: unknown) => toolsSchema.parse({ exec: { sandbox: value } }).exec.sandbox;
    expect(sandbox("")).toBe("auto");
    expect(sandbox(true)).toBe("bwrap");
    expect(sandbox(false)).toBe("none");
    expect(toolsSchema.parse({}).exec).toMatchObject({ sandbox: "auto", network: false, allowedEnvKeys: [] });
  });
});
