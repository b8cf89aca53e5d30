import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runtime } from "../../../src/agent/runtime.js";
import { DirectTurnProcessor } from "../../../src/agent/turn-processor.js";
import { createMcpHttpHandler } from "../../../src/gateway/mcp/http-handler.js";
import type { McpHttpHandler } from "../../../src/gateway/mcp/http-handler.js";
import { mcpErrorText } from "../../../src/mcp/error-text.js";
import { createTestHome, listen, runtimeFor } from "../../mcp-server/helpers.js";
import type { Listening, TestHome } from "../../mcp-server/helpers.js";

let t: TestHome;
let runtime: Runtime;
let handler: McpHttpHandler;
let http: Listening;

beforeAll(async () => {
  t = await createTestHome("mcp-wire-errors");
  runtime = await runtimeFor(t);
  handler = createMcpHttpHandler({ processor: new DirectTurnProcessor(runtime), config: runtime.config });
  http = await listen(handler);
});
afterAll(async () => {
  await handler.close();
  await http.close();
  await runtime.close();
  await t.cleanup();
});

/** POSTs one JSON-RPC message and returns the JSON-RPC reply, read from JSON or SSE. */
async function post(body: unknown, sessionId?: string): Promise<{ reply: Record<string, unknown> | undefined; sessionId: string | null }> {
  const res = await fetch(http.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const json = res.headers.get("content-type")?.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .find((l) => l.includes('"id"'))
    : text;
  return { reply: json ? (JSON.parse(json) as Record<string, unknown>) : undefined, sessionId: res.headers.get("mcp-session-id") };
}

describe("one error prefix on the wire", () => {
  it("sends the bare error text in the JSON-RPC error; the code travels in `code`", async () => {
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(init.sessionId).toBeTruthy();
    await post({ jsonrpc: "2.0", method: "notifications/initialized" }, init.sessionId!);
    const call = await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "nope", arguments: {} } }, init.sessionId!);
    expect(call.reply?.error).toEqual({ code: -32602, message: 'unknown tool "nope"' });
  });

  it("an SDK client reads exactly one prefix", async () => {
    const client = new Client({ name: "wire-errors-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      const err = await client.callTool({ name: "nope", arguments: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as Error).message).toBe('MCP error -32602: unknown tool "nope"');
    } finally {
      await client.close();
    }
  });

  it("an error text that already carries the prefix twice (from another SDK server) is shown with one", () => {
    expect(mcpErrorText(new Error("MCP error -32602: MCP error -32602: Tool x not found"))).toBe("MCP error -32602: Tool x not found");
    expect(mcpErrorText(new Error("plain failure"))).toBe("plain failure");
  });
});
