/**
 * The real CLI program for spawned tests, with `serve-mcp` and `mcp` registered when
 * `src/cli/main.ts` does not register them yet (the lead wires them there).
 */
import { buildProgram } from "../../src/cli/program.js";
import { createContext } from "../../src/cli/context.js";
import { processIo } from "../../src/cli/io.js";
import { packageVersion } from "../../src/core/version.js";
import { registerMcpCommand } from "../../src/cli/commands/mcp.js";
import { registerServeMcpCommand } from "../../src/cli/commands/serve-mcp.js";

const ctx = createContext(processIo(), packageVersion());
const program = buildProgram(ctx);
const has = (name: string): boolean => program.commands.some((c) => c.name() === name);
if (!has("serve-mcp")) registerServeMcpCommand(program, ctx);
if (!has("mcp")) registerMcpCommand(program, ctx);
program.parseAsync(process.argv, { from: "node" }).then(
  () => {
    process.exitCode = ctx.exitCode;
  },
  (err: unknown) => {
    process.stderr.write(`nanobot: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
