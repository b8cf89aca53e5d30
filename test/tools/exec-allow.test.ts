/**
 * allowPatterns on a real bash parse (tree-sitter): only plain simple commands, each matching
 * a pattern, run; everything else is refused with the construct's name. Unit cases for the
 * rule, then the exec tool with allowPatterns from config, for real.
 */
import { access } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAllowPatterns, plainCommands } from "../../src/tools/builtin/exec-allow.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { byName, ctxFor, makeSandbox, runTool, type Sandbox } from "./helpers.js";

const anchored = (patterns: string[]) => patterns.map((p) => new RegExp(`^(?:${p})$`, "s"));

describe("plain commands", () => {
  it.each([
    ["git status", ["git status"]],
    ["git commit -m 'two words'", ["git commit -m 'two words'"]],
    ['"git" log --oneline -n 5', ["git log --oneline -n 5"]],
    ["ls -la src/ && npm test || echo failed", ["ls -la src/", "npm test", "echo failed"]],
    ['echo "hi there" > out.txt 2>&1', ["echo 'hi there'"]],
    ["cat a.txt | sort | uniq -c; wc -l < a.txt", ["cat a.txt", "sort", "uniq -c", "wc -l"]],
    ["git log\ngit status", ["git log", "git status"]],
    ["npm run build --prefix=web", ["npm run build --prefix=web"]],
    ["echo it's", undefined],
  ] as const)("%j → %j", async (command, expected) => {
    const parsed = await plainCommands(command);
    if (expected === undefined) expect(parsed.ok).toBe(false);
    else expect(parsed).toEqual({ ok: true, commands: expected });
  });

  it.each([
    ["echo $(id)", "a command substitution"],
    ["echo `id`", "a command substitution"],
    ['echo "$(id)"', "a command substitution"],
    ["echo $HOME", "a variable expansion"],
    ['rm -f "${PWD%/*}/x"', "a parameter expansion"],
    ["echo $((1+2))", "an arithmetic expansion"],
    ["echo {a,b}", "the word {"],
    ["ls *.ts", "the word *.ts"],
    ["cat ~/.ssh/id_rsa", "the word ~/.ssh/id_rsa"],
    ["echo a\\;touch x", "the word a\\;touch"],
    ["$'\\x72m' -f x", "a $'…' string"],
    ["FOO=1 ls", "a variable assignment"],
    ["f(){ rm -f x; }; f", "a function definition"],
    ["(touch x)", "a subshell"],
    ["{ touch x; }", "a { …; } group"],
    ["if true; then touch x; fi", "an if statement"],
    ["case x in x) touch x;; esac", "a case statement"],
    ["for i in 1; do touch x; done", "a for loop"],
    ["while false; do :; done", "a while loop"],
    ["cat <<EOF\nx\nEOF", "a heredoc"],
    ["cat <<< x", "a here-string"],
    ["cat <(touch x)", "a process substitution"],
    ["sleep 9 &", "a background job (&)"],
    ["export A=1", "a declaration"],
    ["! ls", "a ! negation"],
    ["[[ -f x ]]", "a [[ … ]] test"],
    ["ls # ; touch x", "a comment"],
    ['echo "a\\"b"', 'inside "…"'],
    ["cat < /dev/tcp/127.0.0.1/80", "a redirection to /dev/tcp/127.0.0.1/80"],
    ["echo x > /dev/sda", "a redirection to /dev/sda"],
  ])("%j is refused: %s", async (command, construct) => {
    const parsed = await plainCommands(command);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.reason).toContain(construct);
      expect(parsed.reason).toMatch(/with allowPatterns set only plain commands run$/);
    }
  });

  it("refuses what does not parse", async () => {
    expect(await plainCommands("echo 'open")).toEqual({ ok: false, reason: "the command has a syntax error" });
    expect(await plainCommands("echo $(ls")).toEqual({ ok: false, reason: "the command has a syntax error" });
    // Brace expansion in command position is no grammar node at all: refused, never guessed at.
    expect(await plainCommands("{rm,-f,x}")).toEqual({ ok: false, reason: "the command has a syntax error" });
  });
});

describe("matching patterns", () => {
  const patterns = anchored(["git (status|log( --oneline)?)", "ls( -[a-z]+)?( [\\w./-]+)*", "echo [a-z ]+"]);

  it("matches every simple command against the words bash will pass", async () => {
    expect(await checkAllowPatterns("git 'status' && \"ls\" -la src", patterns)).toEqual({ ok: true });
    expect(await checkAllowPatterns("echo 'hello world' | echo done", patterns)).toEqual({ ok: false, filter: "allow", reason: `"echo 'hello world'" does not match any allowed pattern` });
  });

  it.each([
    "git status; rm -rf x",
    "git status\nrm -rf x",
    "git status | sh",
    "git status && git push",
    "ls && echo $(rm -rf x)",
    "ls `rm x`",
    "git log --oneline --output=../x",
  ])("refuses %j", async (command) => {
    expect(await checkAllowPatterns(command, patterns)).toMatchObject({ ok: false, filter: "allow" });
  });
});

describe("exec with tools.exec.allowPatterns", () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await makeSandbox();
  });
  afterAll(async () => {
    await box.cleanup();
  });

  it("runs a plain matching command and refuses the rest before anything runs", async () => {
    const tools = createBuiltinTools({ workspace: box.workspace, home: box.home, exec: { allowPatterns: ["echo [a-z ]+", "cat [a-z.]+"] } });
    const exec = byName(tools, "exec");
    expect((await runTool(exec, { command: "echo hello && cat notes.txt" }, ctxFor(box.workspace))).text).toMatch(/^hello\nalpha\nbeta\nfoo\n\n\nExit code: 0$/);
    for (const command of ["echo hi $(touch x)", "echo {touch,x}", "f(){ touch x; }; f", "echo hi; touch x", "cat <<< x; touch x"]) {
      const result = await runTool(exec, { command }, ctxFor(box.workspace));
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/^Command blocked by allow filter: /);
    }
    await expect(access(path.join(box.workspace, "x"))).rejects.toThrow();
  });
});
