/**
 * `main` loads `agent` on its own (commands.ts); what the user sees must be what
 * the whole program (program.ts) prints for the same line.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, singleCommandOf } from "../../src/cli/commands.js";
import { createContext } from "../../src/cli/context.js";
import type { CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { buildProgram } from "../../src/cli/program.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-lazy-cli-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Captured {
  io: CliIo;
  out: () => string;
  err: () => string;
}

function capture(): Captured {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { HOME: root, NANOBOT_HOME: join(root, "nb") },
    cwd: root,
  };
  return { io, out: () => out, err: () => err };
}

/** The same line through the whole program, as main ran every command before. */
async function runFull(args: string[]): Promise<{ out: string; err: string }> {
  const c = capture();
  const program = buildProgram(createContext(c.io, "0.0.0-test"));
  await program.parseAsync(["node", "nanobot", ...args], { from: "node" }).catch(() => undefined);
  return { out: c.out(), err: c.err() };
}

async function runMain(args: string[]): Promise<{ out: string; err: string }> {
  const c = capture();
  await main(["node", "nanobot", ...args], c.io);
  return { out: c.out(), err: c.err() };
}

describe("one command loaded on its own", () => {
  it("loads agent on its own, a command of the whole program", () => {
    const program = buildProgram(createContext(capture().io, "0.0.0-test"));
    expect(Object.keys(COMMANDS)).toContain("agent");
    for (const name of Object.keys(COMMANDS)) expect(program.commands.map((c) => c.name())).toContain(name);
  });

  it("prints the same help for every command and subcommand", async () => {
    const program = buildProgram(createContext(capture().io, "0.0.0-test"));
    const lines: string[][] = [];
    for (const command of program.commands) {
      lines.push([command.name(), "--help"]);
      for (const sub of command.commands) lines.push([command.name(), sub.name(), "--help"]);
    }
    expect(lines.length).toBeGreaterThan(20);
    for (const args of lines) {
      const lazy = await runMain(args);
      expect(lazy.out, args.join(" ")).toMatch(/^Usage: nanobot /);
      expect(lazy, args.join(" ")).toEqual(await runFull(args));
    }
  });

  it("reports the same usage errors", async () => {
    for (const args of [["agent", "--frob"], ["agent", "-m"], ["agent", "extra"], ["sessions", "frob"], ["-c", join(root, "none.json"), "agent", "--frob"]]) {
      const lazy = await runMain(args);
      expect(lazy.err, args.join(" ")).not.toBe("");
      expect(lazy, args.join(" ")).toEqual(await runFull(args));
    }
  });

  it("finds the command after the global --config only", () => {
    expect(singleCommandOf(["agent", "-m", "hi"])).toBe("agent");
    expect(singleCommandOf(["-c", "x.json", "agent"])).toBe("agent");
    expect(singleCommandOf(["--config", "x.json", "agent", "--json"])).toBe("agent");
    expect(singleCommandOf(["--config=x.json", "agent"])).toBe("agent");
    expect(singleCommandOf(["-cx.json", "agent", "-m", "hi"])).toBe("agent");
    // Whatever else comes first is the whole program's to handle.
    expect(singleCommandOf([])).toBeUndefined();
    expect(singleCommandOf(["--help"])).toBeUndefined();
    expect(singleCommandOf(["-h", "agent"])).toBeUndefined();
    expect(singleCommandOf(["help", "agent"])).toBeUndefined();
    expect(singleCommandOf(["agnet"])).toBeUndefined();
    expect(singleCommandOf(["gateway"])).toBeUndefined();
    expect(singleCommandOf(["toString"])).toBeUndefined();
    expect(singleCommandOf(["-c"])).toBeUndefined();
  });

  it("still suggests a command for a typo and lists every command in the top-level help", async () => {
    const typo = await runMain(["sesions"]);
    expect(typo.err).toContain("sessions");
    const help = await runMain(["--help"]);
    for (const name of Object.keys(COMMANDS)) expect(help.out).toContain(name);
  });
});
