import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { waitForPort } from "../../bench/support/processes.js";

describe("bench processes", () => {
  it("keeps draining a child's stdout after its port line, so a chatty child does not block", async () => {
    // Announces a port, then writes 1 MB (far past a pipe's 64 KB) and exits only if every write went through.
    const program = `
      process.stdout.write(JSON.stringify({ port: 4321 }) + "\\n");
      const chunk = "x".repeat(1024) + "\\n";
      let left = 1024;
      const more = () => { while (left > 0) { left--; if (!process.stdout.write(chunk)) return process.stdout.once("drain", more); } process.exit(0); };
      more();`;
    const child = spawn(process.execPath, ["-e", program], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(await waitForPort(child, "chatty child")).toBe(4321);
    expect(await exited).toBe(0);
  });
});
