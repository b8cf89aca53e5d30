import { request as httpRequest } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Runtime } from "../../../src/agent/runtime.js";
import { DirectTurnProcessor } from "../../../src/agent/turn-processor.js";
import type { TurnOptions, TurnProcessor, TurnReply, TurnRequest } from "../../../src/agent/turn-processor.js";
import { textOf } from "../../../src/core/message-helpers.js";
import type { Message } from "../../../src/core/messages.js";
import { createMcpHttpHandler } from "../../../src/gateway/mcp/http-handler.js";
import type { McpHttpHandler } from "../../../src/gateway/mcp/http-handler.js";
import { createTestHome, listen, resultText, runtimeFor, waitFor } from "../../mcp-server/helpers.js";
import type { Listening, TestHome } from "../../mcp-server/helpers.js";

/** Delegates to the real processor and keeps every reply, so tests can inspect stopped turns. */
class RecordingProcessor implements TurnProcessor {
  readonly requests: TurnRequest[] = [];
  readonly replies: TurnReply[] = [];
  constructor(private readonly inner: TurnProcessor) {}
  async process(request: TurnRequest, options?: TurnOptions): Promise<TurnReply> {
    this.requests.push(request);
    const reply = await this.inner.process(request, options);
    this.replies.push(reply);
    return reply;
  }
}

let t: TestHome;
let runtime: Runtime;
let processor: RecordingProcessor;
let handler: McpHttpHandler;
let http: Listening;
const clients: Client[] = [];

async function start(config: Record<string, unknown> = {}): Promise<void> {
  await t.writeConfig(config);
  runtime = await runtimeFor(t);
  processor = new RecordingProcessor(new DirectTurnProcessor(runtime));
  handler = createMcpHttpHandler({
    processor,
    config: runtime.config,
    loadMessages: (key) => runtime.store().loadMessages(key),
    version: "9.9.9",
  });
  http = await listen(handler);
}

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "mcp-http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(http.url));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

beforeEach(async () => {
  t = await createTestHome("mcp-http");
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await handler?.close();
  await http?.close();
  await runtime?.close();
  await t.cleanup();
});

describe("nanobot MCP server over Streamable HTTP", () => {
  it("publishes one chat-with tool per chat agent and skips chat: false", async () => {
    await start({ agents: { alpha: { description: "Knows the alphabet." }, beta: { chat: false } } });
    const { client } = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: "nanobot", version: "9.9.9" });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["chat-with-alpha"]);
    expect(tools[0]?.description).toMatch(/^Knows the alphabet\./);
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", required: ["prompt"] });
  });

  it("runs a turn in the session bound to the MCP session, streaming progress, and serves the history", async () => {
    await start();
    t.fake.enqueue(
      { toolCalls: [{ id: "call_ls", name: "list_dir", arguments: { path: "." } }] },
      { text: "Your workspace is empty." },
      { text: "Still empty." },
    );
    const { client, transport } = await connect();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "what is in my workspace?" } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(resultText(result)).toBe("Your workspace is empty.");
    expect(result.isError).toBeFalsy();
    const messages = progress.map((p) => p.message);
    expect(messages).toContain("[tool] list_dir");
    expect(messages).toContain("[tool done] list_dir");
    // Text deltas follow the tool activity (the last ones may share a read with the reply,
    // which SDK clients drop, so only the start is certain).
    const streamed = messages.filter((m) => !m?.startsWith("[")).join("");
    expect("Your workspace is empty.".startsWith(streamed)).toBe(true);
    expect(messages.slice(0, 2)).toEqual(["[tool] list_dir", "[tool done] list_dir"]);
    // Progress values only go up.
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));

    const sessionKey = `mcp:${transport.sessionId ?? "?"}`;
    expect(processor.requests[0]).toMatchObject({ sessionKey, channel: "mcp", content: "what is in my workspace?" });

    // The next call continues the same conversation.
    await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "and now?" } });
    const third = t.fake.requests[2]?.body as { messages: Array<{ role: string }> };
    expect(third.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);

    const history = await client.readResource({ uri: "chat://history" });
    const json = JSON.parse(String((history.contents[0] as { text: string }).text)) as { sessionKey: string; messages: Message[] };
    expect(json.sessionKey).toBe(sessionKey);
    expect(json.messages.filter((m) => m.role !== "tool").map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "what is in my workspace?"],
      ["assistant", ""],
      ["assistant", "Your workspace is empty."],
      ["user", "and now?"],
      ["assistant", "Still empty."],
    ]);
    expect((history.contents[1] as { text: string }).text).toContain("user: and now?\nassistant: Still empty.");

    const progressResource = await client.readResource({ uri: "chat://progress" });
    expect(JSON.parse(String((progressResource.contents[0] as { text: string }).text))).toMatchObject({
      sessionKey,
      agent: "nanobot",
      running: false,
      text: "Still empty.",
      stopReason: "completed",
    });
    t.fake.assertDone();
  });

  it("two MCP sessions get two nanobot sessions", async () => {
    await start();
    t.fake.enqueue({ text: "one" }, { text: "two" });
    const a = await connect();
    const b = await connect();
    await a.client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "first" } });
    await b.client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "second" } });
    const second = t.fake.requests[1]?.body as { messages: Array<{ role: string }> };
    expect(second.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    expect(handler.sessionCount()).toBe(2);
  });

  it("attachments reach the model as image parts", async () => {
    await start();
    t.fake.enqueue({ text: "A red dot." });
    const { client } = await connect();
    const result = await client.callTool({
      name: "chat-with-nanobot",
      arguments: { prompt: "describe", attachments: [{ name: "dot.png", url: "https://example.com/dot.png", mimeType: "image/png" }] },
    });
    expect(resultText(result)).toBe("A red dot.");
    const body = t.fake.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(body.messages.at(-1)?.content).toEqual([
      { type: "text", text: "describe" },
      { type: "image_url", image_url: { url: "https://example.com/dot.png" } },
    ]);
  });

  it("invalid arguments come back as a tool error without a turn", async () => {
    await start();
    const { client } = await connect();
    const result = await client.callTool({ name: "chat-with-nanobot", arguments: { text: "no prompt" } });
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain("prompt");
    expect(t.fake.requests).toHaveLength(0);
  });

  it("cancelling the call aborts the turn and the turn is saved as stopped", async () => {
    await start();
    t.fake.enqueue({ text: "too late", delayMs: 30_000 });
    const { client } = await connect();
    const abort = new AbortController();
    const call = client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "take your time" } }, undefined, {
      signal: abort.signal,
    });
    await waitFor(() => t.fake.requests.length === 1, "the model request");
    abort.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => processor.replies.length === 1, "the stopped turn");
    const reply = processor.replies[0];
    expect(reply?.stopReason).toBe("aborted");
    const turn = await runtime.store().getTurn(reply?.turnId ?? "");
    expect(turn?.status).toBe("stopped");
  });

  it("refuses a foreign Host or Origin (DNS rebinding) and accepts loopback ones", async () => {
    await start();
    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const post = (headers: Record<string, string>): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port: http.port,
            path: "/mcp",
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.once("error", reject);
        req.end(init);
      });
    expect(await post({ host: "evil.example" })).toBe(403);
    expect(await post({ host: `evil.example:${http.port}` })).toBe(403);
    expect(await post({ host: `localhost:${http.port}`, origin: "http://evil.example" })).toBe(403);
    expect(await post({ host: `localhost:${http.port}`, origin: `http://localhost:${http.port}` })).toBe(200);
    expect(await post({ host: `[::1]:${http.port}` })).toBe(200);
  });
});
