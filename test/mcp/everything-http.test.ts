import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClientManager } from "../../src/mcp/manager.js";
import { ctx, startEverythingHttp, textOfOutput } from "./helpers.js";
import type { HttpServerProcess } from "./helpers.js";

const signal = new AbortController().signal;

describe("Streamable HTTP server-everything", () => {
  let server: HttpServerProcess;
  let manager: McpClientManager;
  const sleeps: number[] = [];

  beforeAll(async () => {
    server = await startEverythingHttp("streamableHttp");
    manager = await McpClientManager.connect(
      { web: { url: `http://127.0.0.1:${server.port}/mcp`, headers: { "X-Test": "${TEST_HEADER}" } } },
      { env: { TEST_HEADER: "yes" }, sleep: async (ms) => void sleeps.push(ms) },
    );
  });
  afterAll(async () => {
    await manager.close();
    await server.stop();
  });

  it("detects Streamable HTTP and lists the tools added after the handshake", () => {
    expect(manager.failures()).toEqual([]);
    expect(manager.connection("web")?.transportType).toBe("http");
    expect(manager.tools().map((t) => t.name)).toEqual(expect.arrayContaining(["mcp_web_echo", "mcp_web_get-sum"]));
  });

  it("calls a tool and receives progress", async () => {
    const echo = manager.tools().find((t) => t.name === "mcp_web_echo")!;
    expect(textOfOutput(await echo.execute({ message: "over http" }, ctx, signal))).toBe("Echo: over http");
    const progress: number[] = [];
    const long = manager.tools().find((t) => t.name === "mcp_web_trigger-long-running-operation")!;
    const out = await long.execute({ duration: 0.2, steps: 2 }, { ...ctx, progress: (p) => progress.push(p) }, signal);
    expect(textOfOutput(out)).toContain("completed");
    expect(progress).toEqual([1, 2]);
  });

  it("reconnects when the server restarted and the session is gone", async () => {
    await server.stop();
    server = await startEverythingHttp("streamableHttp", server.port);
    const out = await manager.callTool("web", "echo", { message: "again" });
    expect(textOfOutput(out)).toBe("Echo: again");
    expect(sleeps).toEqual([1000]);
  });
});

describe("SSE server-everything", () => {
  let server: HttpServerProcess;
  let manager: McpClientManager;

  beforeAll(async () => {
    server = await startEverythingHttp("sse");
    manager = await McpClientManager.connect({ legacy: { url: `http://127.0.0.1:${server.port}/sse` } });
  });
  afterAll(async () => {
    await manager.close();
    await server.stop();
  });

  it("detects SSE from the /sse suffix and calls tools", async () => {
    expect(manager.failures()).toEqual([]);
    expect(manager.connection("legacy")?.transportType).toBe("sse");
    const sum = manager.tools().find((t) => t.name === "mcp_legacy_get-sum")!;
    expect(textOfOutput(await sum.execute({ a: 1, b: 2 }, ctx, signal))).toContain("3");
  });
});
