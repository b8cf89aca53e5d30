import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { adapterFor } from "../../src/providers/adapters.js";
import type { WireApi } from "../../src/providers/types.js";
import { ask } from "./helpers.js";

/**
 * A hand-driven SSE server: it sends the first chunk, then waits until the test releases it
 * before sending the rest. That makes "delta 1 arrived before chunk 2 was sent" observable
 * without any timing assumptions, and lets the test watch the socket close on abort.
 */
interface GatedServer {
  baseURL: string;
  sent: number;
  release: () => void;
  closed: Promise<void>;
}

const sse = (data: unknown) => `event: ${String((data as { type?: string }).type ?? "message")}\ndata: ${JSON.stringify(data)}\n\n`;

const FRAMES: Record<WireApi, { first: string[]; rest: string[] }> = {
  chat: {
    first: [`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: "Hello" } }] })}\n\n`],
    rest: [
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: " world" }, finish_reason: "stop" }] })}\n\n`,
      "data: [DONE]\n\n",
    ],
  },
  responses: {
    first: [sse({ type: "response.created", response: {} }), sse({ type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "Hello" })],
    rest: [
      sse({ type: "response.output_text.delta", item_id: "m", output_index: 0, delta: " world" }),
      sse({ type: "response.completed", response: { usage: { input_tokens: 1, output_tokens: 2 } } }),
    ],
  },
  anthropic: {
    first: [
      sse({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } }),
      sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } }),
    ],
    rest: [
      sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " world" } }),
      sse({ type: "content_block_stop", index: 0 }),
      sse({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }),
      sse({ type: "message_stop" }),
    ],
  },
};

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((r) => {
          s.close(() => r());
          s.closeAllConnections();
        }),
    ),
  );
  servers = [];
});

async function gatedServer(api: WireApi): Promise<GatedServer> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let onClosed!: () => void;
  const closed = new Promise<void>((r) => (onClosed = r));
  const state: GatedServer = { baseURL: "", sent: 0, release, closed };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.on("close", onClosed);
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const chunk of FRAMES[api].first) res.write(chunk);
    state.sent = 1;
    void gate.then(() => {
      if (res.destroyed) return;
      for (const chunk of FRAMES[api].rest) res.write(chunk);
      state.sent = 2;
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  state.baseURL = api === "anthropic" ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;
  return state;
}

describe.each<WireApi>(["chat", "responses", "anthropic"])("%s streaming", (api) => {
  const target = (baseURL: string) => ({ provider: "p", model: "m", api, baseURL });

  it("delivers the first delta before the server sends the second chunk", async () => {
    const server = await gatedServer(api);
    const stream = adapterFor(api)(target(server.baseURL), ask("hi"));
    const sentWhenSeen: number[] = [];
    for await (const event of stream) {
      if (event.type !== "text_delta") continue;
      sentWhenSeen.push(server.sent);
      server.release();
    }
    expect(sentWhenSeen).toEqual([1, 2]);
    expect((await stream.result()).message.content).toEqual([{ type: "text", text: "Hello world" }]);
  });

  it("abort closes the HTTP connection (the server sees the socket close)", async () => {
    const server = await gatedServer(api);
    const controller = new AbortController();
    const stream = adapterFor(api)(target(server.baseURL), ask("hi"), controller.signal);
    for await (const event of stream) if (event.type === "text_delta") controller.abort();
    await expect(stream.result()).rejects.toMatchObject({ code: "aborted" });
    await server.closed;
    expect(server.sent).toBe(1);
  });
});
