import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withFallback } from "../../src/providers/fallback.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, FakeStep } from "../fakes/fake-llm-types.js";
import { ask, collect, rawModel } from "./helpers.js";

let primary: FakeLLM;
let backup: FakeLLM;
beforeEach(async () => {
  primary = await startFakeLLM();
  backup = await startFakeLLM();
});
afterEach(async () => {
  await primary.close();
  await backup.close();
});

const down: FakeStep = { kind: "error", status: 503, body: { error: { message: "unavailable", type: "server_error", param: null, code: null } } };

function chain(now: () => number) {
  return withFallback([rawModel(primary, "chat", { model: "main" }), rawModel(backup, "anthropic", { model: "spare" })], { now });
}

describe("fallback models", () => {
  it.each<[string, FakeStep]>([
    ["5xx", down],
    ["rate limit", { kind: "error", status: 429, body: { error: { message: "slow down", type: "requests", param: null, code: "rate_limit_exceeded" } } }],
    ["auth", { kind: "error", status: 401, body: { error: { message: "bad key", type: "invalid_request_error", param: null, code: "invalid_api_key" } } }],
    ["overloaded", { kind: "error", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }],
    ["connection reset", { kind: "hangup" }],
  ])("switches to the next model on %s and says so", async (_, step) => {
    primary.enqueue(step);
    backup.enqueue({ text: "from the spare" });
    const { events, response } = await collect(chain(() => 0).stream(ask("hi")));
    expect(events.find((e) => e.type === "fallback")).toMatchObject({ from: "openai/main", to: "anthropic/spare" });
    expect(response).toMatchObject({ provider: "anthropic", model: "spare" });
    expect(response?.message.content).toEqual([{ type: "text", text: "from the spare" }]);
  });

  it("does not fall back on a bad request", async () => {
    primary.enqueue({ kind: "error", status: 400, body: { error: { message: "bad tool schema", type: "invalid_request_error", param: null, code: null } } });
    const { events, error } = await collect(chain(() => 0).stream(ask("hi")));
    expect(error).toMatchObject({ kind: "bad_request" });
    expect(events.some((e) => e.type === "fallback")).toBe(false);
    expect(backup.requests).toHaveLength(0);
  });

  it("does not fall back once the primary streamed content", async () => {
    primary.enqueue({ text: "half an answer here", chunkSize: 3, fault: { type: "cut", afterChunks: 3 } });
    const { error } = await collect(chain(() => 0).stream(ask("hi")));
    expect(error).toMatchObject({ kind: "connection", streamed: true });
    expect(backup.requests).toHaveLength(0);
  });
});

describe("circuit breaker", () => {
  it("skips the primary for 60 s after 3 consecutive failures, then tries it again", async () => {
    let clock = 1_000_000;
    const model = chain(() => clock);
    for (let i = 0; i < 3; i++) {
      primary.enqueue(down);
      backup.enqueue({ text: `spare ${i}` });
      await collect(model.stream(ask("hi")));
    }
    expect(primary.requests).toHaveLength(3);

    backup.enqueue({ text: "spare while open" });
    clock += 59_000;
    const skipped = await collect(model.stream(ask("hi")));
    expect(primary.requests).toHaveLength(3);
    expect(skipped.events.find((e) => e.type === "fallback")).toMatchObject({ error: "circuit open for openai/main" });
    expect(skipped.response?.model).toBe("spare");

    clock += 2_000;
    primary.enqueue({ text: "primary is back" });
    const back = await collect(model.stream(ask("hi")));
    expect(primary.requests).toHaveLength(4);
    expect(back.response?.model).toBe("main");
    primary.assertDone();
    backup.assertDone();
  });

  it("a success resets the failure count", async () => {
    const model = chain(() => 0);
    primary.enqueue(down, down, { text: "ok" }, down, down);
    backup.enqueue({ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" });
    for (let i = 0; i < 5; i++) await collect(model.stream(ask("hi")));
    primary.enqueue({ text: "still tried" });
    const { response } = await collect(model.stream(ask("hi")));
    expect(response?.model).toBe("main");
  });
});
