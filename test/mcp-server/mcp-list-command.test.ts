import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerMcpCommand } from "../../src/cli/commands/mcp.js";
import { createContext } from "../../src/cli/context.js";
import type { CliIo } from "../../src/cli/io.js";
import { buildProgram } from "../../src/cli/program.js";
import type { ListedServer } from "../../src/mcp/list-servers.js";
import { referenceSpec } from "../mcp/helpers.js";
import { createTestHome } from "./helpers.js";
import type { TestHome } from "./helpers.js";

let t: TestHome;

beforeEach(async () => {
  t = await createTestHome("mcp-list");
  await t.writeConfig({
    mcpServers: {
      everything: referenceSpec("everything"),
      broken: { command: process.execPath, args: ["-e", "process.exit(3)"] },
    },
  });
});
afterEach(async () => {
  await t.cleanup();
});

/** Runs the CLI in-process with `mcp` registered (main.ts gets it from the lead). */
async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: t.env,
    cwd: t.root,
  };
  const ctx = createContext(io, "0.0.0-test");
  const program = buildProgram(ctx);
  if (!program.commands.some((c) => c.name() === "mcp")) registerMcpCommand(program, ctx);
  await program.parseAsync(["node", "nanobot", ...args], { from: "node" });
  return { code: ctx.exitCode, out, err };
}

describe("nanobot mcp list", () => {
  it("--json reports the working server's tools as the model sees them and the broken server's reason", async () => {
    const r = await run(["mcp", "list", "--json"]);
    expect(r.code).toBe(1);
    const servers = JSON.parse(r.out) as ListedServer[];
    expect(servers.map((s) => s.server)).toEqual(["everything", "broken"]);
    const [everything, broken] = servers;
    expect(everything?.error).toBeUndefined();
    expect(everything?.tools).toContainEqual(expect.objectContaining({ name: "mcp_everything_echo", sourceTool: "echo", kind: "tool" }));
    expect(everything?.tools.find((tool) => tool.name === "mcp_everything_echo")?.description).toMatch(/echo/i);
    expect(broken?.tools).toEqual([]);
    expect(broken?.error).toEqual(expect.any(String));
    expect(broken?.error?.length).toBeGreaterThan(0);
  }, 60_000);

  it("prints a readable listing: one line per tool, the failure with its reason", async () => {
    const r = await run(["mcp", "list"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^everything {2}\d+ tools$/m);
    expect(r.out).toMatch(/^ {2}mcp_everything_echo {2}\S/m);
    expect(r.out).toMatch(/^broken {2}failed: \S/m);
  }, 60_000);

  it("a config without servers says how to add one and succeeds", async () => {
    await t.writeConfig();
    const r = await run(["mcp", "list"]);
    expect(r).toMatchObject({ code: 0, out: "no MCP servers configured (add them under mcpServers or tools.mcpServers)\n" });
  });
});
