/**
 * Elicitation through the gateway's web API, over HTTP on loopback: the fake LLM calls the real
 * everything server's `trigger-elicitation-request`; the question arrives on the `/api/chat`
 * event stream, the answer is posted to `/api/elicitation/:id` (checked against the form first),
 * and the tool result the model gets carries it. The turn's request timeout and the tool's own
 * timeout are both shorter than the time the user takes: neither runs while the user answers.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { afterEach, describe, expect, it } from "vitest";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { referenceSpec } from "./helpers.js";

interface ChatEvent {
  type: string;
  [key: string]: unknown;
}

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function start(apiKey?: string): Promise<GatewayFixture> {
  fx = await startGatewayFixture({
    requestTimeoutMs: 2_000,
    ...(apiKey ? { apiKey } : {}),
    extra: { mcpServers: { everything: { ...referenceSpec("everything"), toolTimeout: 2 } } },
  });
  // Connected before the turn, so the server's start-up does not eat into the request timeout.
  await fx.runtime.mcp();
  fx.fake.enqueue({ toolCalls: [{ id: "call_ask", name: "mcp_everything_trigger-elicitation-request", arguments: {} }] }, { text: "thanks" });
  return fx;
}

/** Runs a chat turn, calling `onEvent` for each event (awaited, so it may answer questions). */
async function chat(f: GatewayFixture, onEvent: (e: ChatEvent) => Promise<void>, headers: Record<string, string> = {}): Promise<ChatEvent[]> {
  const res = await fetch(`${f.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ message: "ask me something", session: "ask" }),
  });
  expect(res.status).toBe(200);
  const events: ChatEvent[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    const event = JSON.parse(value.data) as ChatEvent;
    events.push(event);
    await onEvent(event);
  }
}

function answer(f: GatewayFixture, id: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${f.url}/api/elicitation/${id}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

const toolText = (events: ChatEvent[]): string => String(events.find((e) => e.type === "tool_result")?.text ?? "");

describe("elicitation in the web API", () => {
  it("streams the question, refuses an answer that does not fit, and hands the fitting one to the server", async () => {
    const f = await start();
    const refusals: string[] = [];
    const events = await chat(f, async (e) => {
      if (e.type !== "elicitation") return;
      const id = String(e.id);
      const missingName = await answer(f, id, { action: "accept", content: { check: true } });
      expect(missingName.status).toBe(400);
      refusals.push(((await missingName.json()) as { error: { message: string } }).error.message);
      // Longer than both the 2 s request timeout and the 2 s tool timeout.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const ok = await answer(f, id, { action: "accept", content: { name: "Ada Lovelace", check: true, integer: 7 } });
      expect(ok.status).toBe(200);
    });
    const question = events.find((e) => e.type === "elicitation");
    expect(question).toMatchObject({ server: "everything", mode: "form", message: "Please provide inputs for the following fields:" });
    expect((question?.fields as { name: string; required: boolean }[])[0]).toMatchObject({ name: "name", kind: "string", required: true });
    expect(refusals).toEqual(["invalid answer: name is required"]);
    expect(events.find((e) => e.type === "elicitation_end")).toMatchObject({ id: question?.id, action: "accept" });
    expect(toolText(events)).toContain("- Name: Ada Lovelace");
    expect(toolText(events)).toContain("- Favorite Integer: 7");
    expect(events.at(-1)).toMatchObject({ type: "done", content: "thanks", stopReason: "completed" });
    // The answer went back to the model with the tool result.
    expect(JSON.stringify(f.fake.requests[1]?.body)).toContain("Ada Lovelace");
  });

  it("a decline reaches the server as a decline; the question cannot be answered twice", async () => {
    const f = await start();
    let again = 0;
    const events = await chat(f, async (e) => {
      if (e.type !== "elicitation") return;
      expect((await answer(f, String(e.id), { action: "decline" })).status).toBe(200);
      again = (await answer(f, String(e.id), { action: "accept", content: { name: "late" } })).status;
    });
    expect(again).toBe(404);
    expect(toolText(events)).toContain("User declined");
    expect(events.find((e) => e.type === "elicitation_end")).toMatchObject({ action: "decline" });
  });

  it("the answer route is behind the gateway's API key", async () => {
    const f = await start("elicit-key-0001");
    const auth = { authorization: "Bearer elicit-key-0001" };
    expect((await answer(f, "no-such-question", { action: "decline" })).status).toBe(401);
    expect((await answer(f, "no-such-question", { action: "decline" }, auth)).status).toBe(404);
    expect((await answer(f, "no-such-question", { action: "maybe" }, auth)).status).toBe(404);
    const events = await chat(
      f,
      async (e) => {
        if (e.type !== "elicitation") return;
        expect((await answer(f, String(e.id), { action: "maybe" }, auth)).status).toBe(400);
        expect((await answer(f, String(e.id), { action: "cancel" }, auth)).status).toBe(200);
      },
      auth,
    );
    expect(toolText(events)).toContain("User cancelled");
  });
});
