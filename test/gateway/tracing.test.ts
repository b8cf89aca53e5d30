/**
 * Issue 24 item 3 (the OpenTelemetry part): a real gateway turn with a model call and an MCP
 * tool call, exported over OTLP/HTTP (JSON) to a loopback collector stand-in. One trace, whose
 * spans nest turn → model / tool → MCP request, carry the GenAI attributes, hang under the
 * client's `traceparent`, and reach the HTTP MCP server as its `traceparent` header. Without
 * OTEL_* variables nothing is exported and no exporter exists.
 */
import { createServer } from "node:http";
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { tracingEnabled } from "../../src/core/tracing/tracer.js";
import { startCollector, spanAttributes } from "../support/otlp-collector.js";
import type { OtlpSpan } from "../support/otlp-collector.js";
import { startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

interface Loopback {
  url: string;
  close(): Promise<void>;
}

async function listen(server: HttpServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closer(server: HttpServer): () => Promise<void> {
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A stateless Streamable HTTP MCP server with a `lookup` tool; records each request's method and `traceparent`. */
async function startMcpServer(): Promise<Loopback & { seen: Array<{ method: string; traceparent?: string }> }> {
  const seen: Array<{ method: string; traceparent?: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        if (req.method !== "POST") return void res.writeHead(405).end();
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { method?: string };
        const traceparent = req.headers.traceparent;
        seen.push({ method: body.method ?? "", ...(typeof traceparent === "string" ? { traceparent } : {}) });
        const mcp = new McpServer({ name: "catalog", version: "1.0.0" });
        mcp.registerTool("lookup", { description: "Looks a flower up.", inputSchema: { query: z.string() } }, ({ query }) => ({
          content: [{ type: "text", text: `${query}: in stock` }],
        }));
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on("close", () => void mcp.close());
        await mcp.connect(transport);
        await transport.handleRequest(req, res, body);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
  });
  const url = await listen(server);
  return { url: `${url}/mcp`, seen, close: closer(server) };
}

const attrs = spanAttributes;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

async function chat(fx: GatewayFixture, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fx.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "are tulips in stock?" }], session_id: "traced" }),
  });
}

function scriptToolTurn(fx: GatewayFixture): void {
  fx.fake.enqueue(
    { toolCalls: [{ id: "call_1", name: "mcp_catalog_lookup", arguments: { query: "tulips" } }], usage: { promptTokens: 40, completionTokens: 4 } },
    { text: "Yes, tulips are in stock.", usage: { promptTokens: 60, completionTokens: 7 } },
  );
}

describe("a traced gateway turn (OTLP/HTTP JSON)", () => {
  it("exports one trace: turn → model calls and tool call → MCP request, under the client's traceparent", async () => {
    const collector = await startCollector();
    open.push(collector);
    const mcp = await startMcpServer();
    open.push(mcp);
    const fx = await startGatewayFixture({
      makeProcessor: (runtime) => new AgentLoop({ runtime }),
      extra: { mcpServers: { catalog: { url: mcp.url } } },
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: "nanobot-under-test",
        OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=k%201",
      },
    });
    let closed = false;
    open.push({ close: async () => void (closed || (await fx.close())) });
    expect(fx.running.tracing.enabled).toBe(true);
    scriptToolTurn(fx);

    const res = await chat(fx, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
    expect(res.status).toBe(200);
    // Closing flushes what is queued to the collector.
    await fx.close();
    closed = true;

    expect(collector.exports.length).toBeGreaterThan(0);
    expect(collector.exports[0]!.headers["x-collector-key"]).toBe("k 1");
    const resource = collector.exports[0]!.body.resourceSpans[0]!.resource;
    expect(resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "nanobot-under-test" } });

    const spans = collector.spans();
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([CLIENT_TRACE]));
    const byName = (name: string): OtlpSpan[] => spans.filter((s) => s.name === name);

    const [turn] = byName("invoke_agent nanobot");
    expect(turn).toBeDefined();
    expect(turn!.parentSpanId).toBe(CLIENT_SPAN);
    expect(attrs(turn!)).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "nanobot",
      "gen_ai.conversation.id": "api:traced",
      "nanobot.session.key": "api:traced",
      "nanobot.stop_reason": "completed",
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.output_tokens": 11,
    });

    const chats = byName("chat test-model");
    expect(chats).toHaveLength(2);
    for (const span of chats) {
      expect(span.parentSpanId).toBe(turn!.spanId);
      expect(span.kind).toBe(3);
    }
    const fakeHost = new URL(fx.fake.openaiBaseURL);
    expect(attrs(chats[0]!)).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "test-model",
      "gen_ai.response.model": "test-model",
      "gen_ai.usage.input_tokens": 40,
      "gen_ai.usage.output_tokens": 4,
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "server.address": fakeHost.hostname,
      "server.port": Number(fakeHost.port),
    });
    expect(attrs(chats[1]!)).toMatchObject({ "gen_ai.usage.input_tokens": 60, "gen_ai.response.finish_reasons": ["stop"] });

    const [tool] = byName("execute_tool mcp_catalog_lookup");
    expect(tool?.parentSpanId).toBe(turn!.spanId);
    expect(attrs(tool!)).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp_catalog_lookup", "gen_ai.tool.call.id": "call_1" });
    expect(attrs(tool!)["error.type"]).toBeUndefined();

    const [call] = byName("tools/call lookup");
    expect(call?.parentSpanId).toBe(tool!.spanId);
    expect(call!.kind).toBe(3);
    expect(attrs(call!)).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "lookup",
      "nanobot.mcp.server": "catalog",
      "network.transport": "tcp",
      "server.address": "127.0.0.1",
    });

    // The MCP server saw the MCP span's context as its parent.
    const seenCall = mcp.seen.find((r) => r.method === "tools/call");
    expect(seenCall?.traceparent).toBe(`00-${CLIENT_TRACE}-${call!.spanId}-01`);
    // Each span ends within its parent.
    for (const child of [...chats, tool!]) {
      expect(BigInt(child.startTimeUnixNano) >= BigInt(turn!.startTimeUnixNano)).toBe(true);
      expect(BigInt(child.endTimeUnixNano) <= BigInt(turn!.endTimeUnixNano)).toBe(true);
    }
  });

  it("starts a new trace when the client sends no traceparent, and marks a failed tool and a failed turn", async () => {
    const collector = await startCollector();
    open.push(collector);
    const fx = await startGatewayFixture({
      makeProcessor: (runtime) => new AgentLoop({ runtime }),
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` },
    });
    let closed = false;
    open.push({ close: async () => void (closed || (await fx.close())) });
    fx.fake.enqueue(
      { toolCalls: [{ id: "call_9", name: "read_file", arguments: { path: "missing.txt" } }] },
      { text: "There is no such file." },
      { kind: "error", status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } },
    );
    expect((await chat(fx)).status).toBe(200);
    expect((await chat(fx)).status).toBe(502);
    await fx.close();
    closed = true;

    const spans = collector.spans();
    const turn = spans.find((s) => s.name === "invoke_agent nanobot");
    expect(turn?.parentSpanId).toBeUndefined();
    const tool = spans.find((s) => s.name === "execute_tool read_file");
    expect(tool?.parentSpanId).toBe(turn!.spanId);
    expect(tool?.traceId).toBe(turn!.traceId);
    expect(attrs(tool!)["error.type"]).toBe("tool_error");
    expect(tool!.status.code).toBe(2);
    // The second turn's model call failed: both its spans say so.
    const failed = spans.filter((s) => s.name === "invoke_agent nanobot").find((s) => s.status.code === 2);
    expect(attrs(failed!)).toMatchObject({ "error.type": "provider", "nanobot.stop_reason": "error" });
    const failedCall = spans.find((s) => s.name === "chat test-model" && s.parentSpanId === failed!.spanId);
    expect(failedCall?.status.code).toBe(2);
    expect(attrs(failedCall!)["error.type"]).toBe("ProviderError");
    const resource = collector.exports[0]!.body.resourceSpans[0]!.resource;
    expect(resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "nanobot" } });
  });
});

describe("traceparent on the gateway's MCP server", () => {
  it("makes the published agent's turn a child of the MCP client's span", async () => {
    const collector = await startCollector();
    open.push(collector);
    const fx = await startGatewayFixture({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } });
    let closed = false;
    open.push({ close: async () => void (closed || (await fx.close())) });
    fx.fake.enqueue({ text: "Hello from the published agent." });
    const client = new Client({ name: "traced-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${fx.url}/mcp`), {
      requestInit: { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } },
    });
    await client.connect(transport);
    const result = await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "hello" } });
    expect(result.isError).toBeFalsy();
    await client.close();
    await fx.close();
    closed = true;

    const spans = collector.spans();
    const turn = spans.find((s) => s.name === "invoke_agent nanobot");
    expect(turn).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    expect(attrs(turn!)["nanobot.channel"]).toBe("mcp");
    const chatSpan = spans.find((s) => s.name === "chat test-model");
    expect(chatSpan?.parentSpanId).toBe(turn!.spanId);
  });
});

describe("tracing unconfigured", () => {
  it("creates no exporter, exports nothing and sends no traceparent", async () => {
    const collector = await startCollector();
    open.push(collector);
    const mcp = await startMcpServer();
    open.push(mcp);
    // Service name and headers alone name no endpoint; OTEL_SDK_DISABLED wins over one.
    const envs: Array<Record<string, string>> = [
      { OTEL_SERVICE_NAME: "nanobot-quiet", OTEL_EXPORTER_OTLP_HEADERS: "a=b" },
      { OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
      { OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    ];
    for (const env of envs) {
      const fx = await startGatewayFixture({ extra: { mcpServers: { catalog: { url: mcp.url } } }, env });
      try {
        expect(fx.running.tracing.enabled).toBe(false);
        expect(tracingEnabled()).toBe(false);
        scriptToolTurn(fx);
        const res = await chat(fx, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
        expect(res.status).toBe(200);
      } finally {
        await fx.close();
      }
    }
    expect(collector.exports).toEqual([]);
    expect(mcp.seen.some((r) => r.method === "tools/call")).toBe(true);
    expect(mcp.seen.filter((r) => r.traceparent !== undefined)).toEqual([]);
  });
});
