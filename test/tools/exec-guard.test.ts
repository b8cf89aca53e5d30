import { access, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { ExecGuard } from "../../src/tools/builtin/exec-guard.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { parseShell } from "../../src/tools/builtin/shell-split.js";
import { SsrfGuard } from "../../src/tools/builtin/ssrf-guard.js";
import { WorkspaceGuard } from "../../src/tools/builtin/workspace-guard.js";
import { ALLOWED_COMMANDS, BLOCKED_COMMANDS } from "./fixtures/exec-corpus.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
});
afterAll(async () => {
  await box.cleanup();
});

function guardFor(options: { restrict?: boolean; allowPatterns?: string[]; denyPatterns?: string[]; whitelist?: string[] } = {}): ExecGuard {
  const workspaceGuard = new WorkspaceGuard({ workspace: box.workspace, restrictToWorkspace: options.restrict ?? true, home: box.home });
  return new ExecGuard({
    workspaceGuard,
    ssrf: new SsrfGuard({ whitelist: options.whitelist ?? [] }),
    allowPatterns: options.allowPatterns ?? [],
    denyPatterns: options.denyPatterns ?? [],
    home: box.home,
  });
}

describe("exec bypass corpus", () => {
  it("has at least 40 blocked and 20 allowed commands", () => {
    expect(BLOCKED_COMMANDS.length).toBeGreaterThanOrEqual(40);
    expect(ALLOWED_COMMANDS.length).toBeGreaterThanOrEqual(20);
  });

  it.each(BLOCKED_COMMANDS.map((c) => [c.command, c] as const))("blocks %j", async (_label, entry) => {
    const tools = createBuiltinTools({
      workspace: box.workspace,
      restrictToWorkspace: true,
      home: box.home,
      exec: { allowPatterns: entry.allowPatterns ?? [] },
    });
    const result = await runTool(byName(tools, "exec"), { command: entry.command }, ctxFor(box.workspace));
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(new RegExp(`^Command blocked by ${entry.filter} filter: .+`));
    // Nothing ran: the marker the allow-filter commands would create does not exist.
    await expect(access(path.join(box.workspace, "x"))).rejects.toThrow();
    await expect(access(path.join(box.workspace, "sub"))).resolves.toBeUndefined();
  });

  it.each(BLOCKED_COMMANDS.filter((c) => c.filter === "deny").map((c) => [c.command] as const))(
    "blocks %j by the deny filter even without restrictToWorkspace",
    (command) => {
      const verdict = guardFor({ restrict: false }).check(command);
      expect(verdict).toMatchObject({ ok: false, filter: "deny" });
    },
  );

  it.each(ALLOWED_COMMANDS.map((c) => [c.command, c] as const))("lets %j through the guard", async (_label, entry) => {
    expect(await guardFor({ allowPatterns: entry.allowPatterns ?? [] }).verify(entry.command, box.workspace)).toEqual({ ok: true });
  });
});

describe("deny and allow patterns from config", () => {
  it("adds user denyPatterns, matched on the text as bash sees it", () => {
    const guard = guardFor({ denyPatterns: ["\\bgit\\s+push\\b"] });
    expect(guard.check("git push origin main")).toMatchObject({ ok: false, filter: "deny" });
    expect(guard.check("g''it push origin main")).toMatchObject({ ok: false, filter: "deny" });
    expect(guard.check("git status")).toEqual({ ok: true });
  });

  it("requires allow patterns to match a whole simple command, not a part of it", async () => {
    const guard = guardFor({ allowPatterns: ["ls"] });
    expect(await guard.verify("ls")).toEqual({ ok: true });
    expect(await guard.verify("ls; id")).toMatchObject({ ok: false, filter: "allow" });
    expect(await guard.verify("lsblk")).toMatchObject({ ok: false, filter: "allow" });
  });

  it("rejects an invalid pattern at configuration time", () => {
    expect(() => guardFor({ denyPatterns: ["(unclosed"] })).toThrow(ConfigError);
    expect(() => guardFor({ allowPatterns: ["[z-a]"] })).toThrow(/tools\.exec\.allowPatterns|Invalid regular expression/);
  });

  it("refuses /dev/tcp sockets, glued proxy options and 0:PORT without restrictToWorkspace too", () => {
    const guard = guardFor({ restrict: false });
    for (const command of ["exec 3<>/dev/tcp/127.0.0.1/8080", "cat < /dev/udp/10.0.0.1/53", "curl -x127.0.0.1:8080 http://example.com/", "curl 0:8080"]) {
      expect(guard.check(command)).toMatchObject({ ok: false, filter: "network" });
    }
    expect(guard.check("echo hi > /dev/tcp/example.com/80")).toEqual({ ok: true });
  });

  it("lets ssrfWhitelist open a private range for commands too", () => {
    const guard = guardFor({ whitelist: ["10.0.0.0/8"] });
    expect(guard.check("curl http://10.0.0.1/")).toEqual({ ok: true });
    expect(guard.check("curl http://192.168.0.1/")).toMatchObject({ ok: false, filter: "network" });
  });
});

describe("workspace filter follows symlinks", () => {
  it("refuses a path through a symlink that points outside", async () => {
    await symlink(box.outside, path.join(box.workspace, "door"));
    expect(guardFor().check("cat door/secret.txt", box.workspace)).toMatchObject({ ok: false, filter: "workspace" });
    expect(guardFor().check("cd door && cat secret.txt", box.workspace)).toMatchObject({ ok: false, filter: "workspace" });
    expect(guardFor({ restrict: false }).check("cat door/secret.txt", box.workspace)).toEqual({ ok: true });
  });
});

describe("shell segment splitting", () => {
  it("splits on every operator and pulls out substitutions", () => {
    const texts = parseShell("a 1 && b 2 || c; d | e & f\ng $(h `i`) <(j) 2>&1").segments.map((s) => s.text);
    expect(texts).toEqual(expect.arrayContaining(["a 1", "b 2", "c", "d", "e", "f", "i", "h `i`", "j", "g $(h `i`) <(j) 2>&1"]));
  });

  it("removes quotes and escapes from words and keeps redirect targets apart", () => {
    const [segment] = parseShell(`"ec"'ho' \\a $'\\x62' > "out file"`).segments;
    expect(segment?.words).toEqual(["echo", "a", "b"]);
    expect(segment?.redirects).toEqual([{ op: ">", target: "out file" }]);
  });

  it("reports unbalanced quoting instead of guessing", () => {
    expect(parseShell("echo 'open").error).toMatch(/unbalanced/);
    expect(parseShell("echo `open").error).toMatch(/unbalanced/);
  });
});
