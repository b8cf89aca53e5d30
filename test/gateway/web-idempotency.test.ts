/**
 * `Idempotency-Key` on the web UI's `POST /api/chat` (issue #24: "POST /v1/chat/completions (and
 * the web UI's API) honour an Idempotency-Key"): a repeat never runs a second turn nor stores the
 * message twice — it gets the first answer as its `done` event (`replayed: true`); a key reused
 * with another message is a 422 before any stream starts; a keyed turn goes on when its
 * connection drops, and the retry collects the answer.
 */
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { startGatewayFixture, waitFor } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface Event {
  type: string;
  content?: string;
  replayed?: boolean;
  delta?: string;
}

function chat(message: string, key?: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${fx!.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify({ session: "idem", message }),
    ...(signal ? { signal } : {}),
  });
}

async function events(res: Response): Promise<Event[]> {
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data:")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(5)) as Event);
}

async function userMessages(): Promise<string[]> {
  const stored = await fx!.runtime.store().loadMessages("web:idem");
  return stored.filter((m) => m.role === "user").map((m) => textOf(m.content));
}

describe("Idempotency-Key on the web UI's chat", () => {
  it("a repeat gets the first answer as a replayed done: one model call, the message stored once", async () => {
    fx = await startGatewayFixture();
    fx.fake.enqueue({ text: "Paris." });
    const first = await events(await chat("capital of France?", "web-1"));
    expect(first.at(-1)).toMatchObject({ type: "done", content: "Paris." });
    expect(first.at(-1)?.replayed).toBeUndefined();
    const again = await events(await chat("capital of France?", "web-1"));
    expect(again).toEqual([expect.objectContaining({ type: "done", content: "Paris.", replayed: true })]);
    expect(fx.fake.requests).toHaveLength(1);
    expect(await userMessages()).toEqual(["capital of France?"]);
  });

  it("a key reused with another message is a 422 before any stream; without a key every send is a turn", async () => {
    fx = await startGatewayFixture();
    fx.fake.enqueue({ text: "One." }, { text: "Two." }, { text: "Three." });
    await events(await chat("first", "web-2"));
    const reused = await chat("something else", "web-2");
    expect(reused.status).toBe(422);
    expect(((await reused.json()) as { error: { code: string } }).error.code).toBe("idempotency_key_reused");
    await events(await chat("no key"));
    await events(await chat("no key"));
    expect(fx.fake.requests).toHaveLength(3);
    expect(await userMessages()).toEqual(["first", "no key", "no key"]);
  });

  it("a keyed turn goes on when the connection drops; the retry with the same key collects the answer", async () => {
    fx = await startGatewayFixture();
    fx.fake.enqueue({ text: "Worth the wait.", delayMs: 500 });
    const gone = new AbortController();
    const first = chat("do not give up", "web-3", gone.signal).then((r) => r.text()).catch((err: unknown) => err);
    await waitFor(() => fx!.fake.requests.length === 1, "the model call");
    gone.abort();
    expect(await first).toBeInstanceOf(Error);
    const retry = await events(await chat("do not give up", "web-3"));
    expect(retry.at(-1)).toMatchObject({ type: "done", content: "Worth the wait." });
    expect(fx.fake.requests).toHaveLength(1);
    expect(await userMessages()).toEqual(["do not give up"]);
  });
});
