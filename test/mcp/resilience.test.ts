import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { McpClientManager } from "../../src/mcp/manager.js";
import { shortHash } from "../../src/mcp/names.js";
import { ctx, isAlive, testServerSpec, textOfOutput, waitFor } from "./helpers.js";
import { LONG_TOOL_NAME } from "./servers/constants.js";

describe("one test server per describe", () => {
  let manager: McpClientManager;
  const sleeps: number[] = [];

  beforeAll(async () => {
    manager = await McpClientManager.connect(
      { t: { ...testServerSpec(), toolTimeout: 0.3 } },
      { sleep: async (ms) => void sleeps.push(ms) },
    );
  });
  afterAll(async () => {
    await manager.close();
  });

  it("exposes a 70-character tool name as 64 characters with a hash, and calls it", async () => {
    const full = `mcp_t_${LONG_TOOL_NAME}`;
    const tool = manager.tools().find((t) => t.name.endsWith(shortHash(full)));
    expect(tool?.name).toHaveLength(64);
    expect(tool?.name).toBe(`${full.slice(0, 55)}_${shortHash(full)}`);
    expect(textOfOutput(await tool!.execute({}, ctx, new AbortController().signal))).toBe("long ok");
  });

  it("turns a hanging call into a timeout error and cancels it on the server", async () => {
    const hang = manager.tools().find((t) => t.name === "mcp_t_hang")!;
    const out = await hang.execute({}, ctx, new AbortController().signal);
    expect(out).toEqual({ content: [{ type: "text", text: "Tool 'hang' timed out after 0s" }], isError: true });
    const count = await manager.callTool("t", "cancel_count", {});
    expect(textOfOutput(count)).toBe("1");
  });

  it("sends notifications/cancelled when the caller aborts", async () => {
    const hang = manager.tools().find((t) => t.name === "mcp_t_hang")!;
    const controller = new AbortController();
    const pending = hang.execute({}, ctx, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortedError" });
    expect(textOfOutput(await manager.callTool("t", "cancel_count", {}))).toBe("2");
  });

  it("lists tools again on tools/list_changed", async () => {
    let changes = 0;
    const unsubscribe = manager.onToolsChanged(() => changes++);
    expect(manager.tools().map((t) => t.name)).not.toContain("mcp_t_added");
    await manager.callTool("t", "add_tool", {});
    await waitFor(() => manager.tools().some((t) => t.name === "mcp_t_added"), "the added tool");
    unsubscribe();
    expect(changes).toBeGreaterThan(0);
    const added = manager.tools().find((t) => t.name === "mcp_t_added")!;
    expect(textOfOutput(await added.execute({}, ctx, new AbortController().signal))).toBe("added works");
  });

  it("reconnects on the next call after the server process was killed", async () => {
    const conn = manager.connection("t")!;
    const pid = conn.pid!;
    process.kill(pid, "SIGKILL");
    await waitFor(() => !conn.connected, "the connection to notice the crash");
    const out = await manager.callTool("t", "whoami", {});
    expect(Number(textOfOutput(out))).not.toBe(pid);
    expect(Number(textOfOutput(out))).toBe(conn.pid);
    expect(sleeps).toEqual([]);
  });

  it("retries once after 1 s when the process dies during a call, then reports the error", async () => {
    const out = await manager.callTool("t", "crash", {});
    expect(out.isError).toBe(true);
    expect(textOfOutput(out)).toMatch(/Connection closed/);
    expect(sleeps).toEqual([1000]);
  });
});

describe("startup", () => {
  let manager: McpClientManager | undefined;
  afterEach(async () => {
    await manager?.close();
    manager = undefined;
  });

  it("reports a failing server with its reason while the others work", async () => {
    manager = await McpClientManager.connect({
      broken: { command: process.execPath, args: ["-e", "process.stderr.write('boom: missing key'); process.exit(3)"] },
      missing: { command: "/nonexistent/definitely-not-here" },
      good: testServerSpec(),
    });
    const failures = manager.failures();
    expect(failures.map((f) => f.server).sort()).toEqual(["broken", "missing"]);
    expect(failures.find((f) => f.server === "broken")?.reason).toContain("boom: missing key");
    expect(failures.find((f) => f.server === "missing")?.reason).toMatch(/ENOENT/);
    expect(textOfOutput(await manager.callTool("good", "whoami", {}))).toMatch(/^\d+$/);
    expect(manager.tools().every((t) => t.name.startsWith("mcp_good_"))).toBe(true);
  });

  it("gives up on a slow handshake after the connect timeout", async () => {
    manager = await McpClientManager.connect(
      { slow: testServerSpec({ SLOW_HANDSHAKE_MS: "5000" }) },
      { connectTimeoutMs: 300 },
    );
    expect(manager.failures()).toEqual([{ server: "slow", reason: expect.stringContaining("timed out after 300 ms") }]);
  });

  it("a server's own connectTimeout (seconds) overrides the default; the failure names the server and the limit", async () => {
    manager = await McpClientManager.connect({
      slow: { ...testServerSpec({ SLOW_HANDSHAKE_MS: "5000" }), connectTimeout: 0.3 },
      good: testServerSpec(),
    });
    expect(manager.failures()).toEqual([{ server: "slow", reason: "handshake timed out after 300 ms (mcpServers.slow.connectTimeout)" }]);
    expect(textOfOutput(await manager.callTool("good", "whoami", {}))).toMatch(/^\d+$/);
  });

  it("applies enabledTools and leaves no child process after close", async () => {
    manager = await McpClientManager.connect({ t: { ...testServerSpec(), enabledTools: ["whoami"] } });
    expect(manager.tools().map((t) => t.name)).toEqual(["mcp_t_whoami"]);
    const pid = manager.connection("t")!.pid!;
    expect(isAlive(pid)).toBe(true);
    await manager.close();
    await waitFor(() => !isAlive(pid), "the server process to exit");
  });
});
