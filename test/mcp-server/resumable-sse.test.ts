/**
 * Resumable SSE on our HTTP endpoint, over real HTTP on loopback: a 2025-11-25 client gets a
 * priming event with an id and the `retry` interval first; when the server closes the stream
 * mid-call (SEP-1699 polling), a GET with `Last-Event-ID` delivers the reply from the session's
 * event store. A Last-Event-ID the store does not hold is refused.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProfileHttpHandler } from "../../src/gateway/mcp/http-handler.js";
import type { McpHttpHandler } from "../../src/gateway/mcp/http-handler.js";
import type { ServerProfile } from "../../src/gateway/mcp/server-profile.js";
import { listen } from "./helpers.js";
import type { Listening } from "./helpers.js";

const VERSION = "2025-11-25";
const profile: ServerProfile = {
  name: "resumable-test",
  version: "1.0.0",
  tools: [
    {
      definition: { name: "poll_me", description: "Closes its stream, then answers.", inputSchema: { type: "object", properties: {} } },
      async call(_args, { closeStream }) {
        closeStream?.();
        await new Promise((resolve) => setTimeout(resolve, 100));
        return { content: [{ type: "text", text: "the reply after the reconnect" }] };
      },
    },
  ],
};

let handler: McpHttpHandler;
let http: Listening;
let session: string;

function post(body: unknown, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(http.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": VERSION, ...extra },
    body: JSON.stringify(body),
  });
}

/** Reads SSE events (with the raw `retry:` lines) until `stop` says so or the stream ends. */
async function readEvents(res: Response, stop: (e: EventSourceMessage) => boolean = () => false): Promise<{ events: EventSourceMessage[]; retry?: number }> {
  const events: EventSourceMessage[] = [];
  let retry: number | undefined;
  const reader = res.body!
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => (retry = ms) }))
    .getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    events.push(value);
    if (stop(value)) {
      await reader.cancel();
      break;
    }
  }
  return { events, ...(retry !== undefined ? { retry } : {}) };
}

beforeAll(async () => {
  handler = createProfileHttpHandler(() => profile, { retryIntervalMs: 250 });
  http = await listen(handler);
  const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  session = init.headers.get("mcp-session-id") ?? "";
  await init.text();
  const initialized = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": session });
  expect(initialized.status).toBe(202);
});
afterAll(async () => {
  await handler.close();
  await http.close();
});

describe("resumable SSE on /mcp", () => {
  it("primes the stream with an id and retry, and replays the reply after Last-Event-ID", async () => {
    const call = await post({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "poll_me", arguments: {} } }, { "mcp-session-id": session });
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    const first = await readEvents(call);
    // The stream was closed before the reply: only the priming event came.
    expect(first.events).toHaveLength(1);
    expect(first.events[0]?.id).toBeTruthy();
    expect(first.events[0]?.data).toBe("");
    expect(first.retry).toBe(250);

    const resumed = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": VERSION, "last-event-id": first.events[0]!.id! },
    });
    expect(resumed.status).toBe(200);
    const { events } = await readEvents(resumed, (e) => e.data.includes('"id":7'));
    const reply = JSON.parse(events.at(-1)?.data ?? "{}") as { id?: number; result?: { content?: { text?: string }[] } };
    expect(reply.id).toBe(7);
    expect(reply.result?.content?.[0]?.text).toBe("the reply after the reconnect");
  });

  it("refuses a Last-Event-ID the session's store does not hold", async () => {
    const res = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": VERSION, "last-event-id": "not-an-event.42" },
    });
    expect(res.status).toBe(400);
    await res.text();
  });
});
