/**
 * `tools.mcpServers.<name>.enabledTools` keeps the Python nanobot's meaning, seen through
 * `nanobot mcp list --json` against the real `everything` reference server: entries match the
 * MCP name or the `mcp_<server>_<tool>` name; a tool subset leaves the server's prompts and
 * resources out; an empty list exposes nothing; `["*"]` everything; entries naming no tool
 * are reported.
 */
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
  t = await createTestHome("mcp-enabled");
});
afterEach(async () => {
  await t.cleanup();
});

async function list(enabledTools: string[]): Promise<{ code: number; server: ListedServer; text: string }> {
  await t.writeConfig({ tools: { mcpServers: { everything: { ...referenceSpec("everything"), enabledTools } } } });
  let out = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: () => undefined },
    env: t.env,
    cwd: t.root,
  };
  const ctx = createContext(io, "0.0.0-test");
  const program = buildProgram(ctx);
  if (!program.commands.some((c) => c.name() === "mcp")) registerMcpCommand(program, ctx);
  await program.parseAsync(["node", "nanobot", "mcp", "list", "--json"], { from: "node" });
  const [server] = JSON.parse(out) as ListedServer[];
  return { code: ctx.exitCode, server: server!, text: out };
}

describe("enabledTools (Python meaning) through nanobot mcp list", () => {
  it("a subset by MCP name or mcp_<server>_<tool> name exposes those tools only, without prompts or resources", async () => {
    const { code, server } = await list(["echo", "mcp_everything_get-sum"]);
    expect(code).toBe(0);
    expect(server.tools.map((tool) => [tool.name, tool.kind])).toEqual([
      ["mcp_everything_echo", "tool"],
      ["mcp_everything_get-sum", "tool"],
    ]);
    expect(server.unmatchedEnabledTools).toBeUndefined();
  }, 60_000);

  it("an empty list exposes nothing", async () => {
    const { server } = await list([]);
    expect(server.error).toBeUndefined();
    expect(server.tools).toEqual([]);
  }, 60_000);

  it('["*"] exposes the tools, prompts and resources', async () => {
    const { server } = await list(["*"]);
    const kinds = new Set(server.tools.map((tool) => tool.kind));
    expect([...kinds].sort()).toEqual(["prompt", "resource", "tool"]);
  }, 60_000);

  it("entries that name no tool are reported", async () => {
    const { server } = await list(["echo", "no_such_tool"]);
    expect(server.tools.map((tool) => tool.name)).toEqual(["mcp_everything_echo"]);
    expect(server.unmatchedEnabledTools).toEqual(["no_such_tool"]);
  }, 60_000);
});
