import { describe, expect, it } from "vitest";
import { AbortedError, ContextOverflowError, ProviderError } from "../../src/core/errors.js";
import { mapHttpError, mapNetworkError, mapStreamError, parseRetryAfter } from "../../src/providers/error-mapping.js";
import { adapterFor } from "../../src/providers/adapters.js";
import { parseToolArguments } from "../../src/providers/tool-arguments.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import { ask, collect, targetFor } from "./helpers.js";

const openai = (message: string, type = "invalid_request_error", code: string | null = null) => ({ error: { message, type, param: null, code } });

describe("HTTP status and body → kind", () => {
  it.each<[number, unknown, string, boolean]>([
    [408, "timeout", "timeout", true],
    [409, openai("conflict"), "unknown", true],
    [429, openai("Rate limit reached", "requests", "rate_limit_exceeded"), "rate_limit", true],
    [429, openai("You exceeded your current quota, please check your plan and billing details."), "quota", false],
    [402, openai("Insufficient credits"), "quota", false],
    [500, openai("oops", "server_error"), "server", true],
    [503, "The model is overloaded", "overloaded", true],
    [529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "overloaded", true],
    [401, openai("Incorrect API key", "invalid_request_error", "invalid_api_key"), "auth", false],
    [403, { type: "error", error: { type: "permission_error", message: "denied" } }, "auth", false],
    [404, openai("The model does not exist", "invalid_request_error", "model_not_found"), "not_found", false],
    [400, openai("Invalid schema"), "bad_request", false],
  ])("%i → %s", (status, body, kind, retryable) => {
    const err = mapHttpError(status, body, undefined, { provider: "p" });
    expect([err.kind, err.retryable]).toEqual([kind, retryable]);
  });

  it.each([
    "This model's maximum context length is 8192 tokens",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "Input exceeds the context window of this model",
    "too many tokens in request",
  ])("400 '%s' → ContextOverflowError", (message) => {
    expect(mapHttpError(400, openai(message), undefined)).toBeInstanceOf(ContextOverflowError);
  });

  it("in-stream errors map by type", () => {
    expect(mapStreamError({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }).kind).toBe("overloaded");
    expect(mapStreamError(openai("The server had an error", "server_error")).kind).toBe("server");
    expect(mapStreamError({ error: { message: "maximum context length exceeded" } })).toBeInstanceOf(ContextOverflowError);
  });
});

describe("retry hints", () => {
  it("reads seconds, HTTP dates, retry-after-ms and 'try again in'", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter(new Headers({ "retry-after": "12" }), undefined, now)).toBe(12);
    expect(parseRetryAfter(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }), undefined, now)).toBe(30);
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "250" }), undefined, now)).toBe(0.25);
    expect(parseRetryAfter(undefined, "Please try again in 1.5s.", now)).toBe(1.5);
    expect(parseRetryAfter(undefined, "Please try again in 174ms.", now)).toBe(0.174);
    expect(parseRetryAfter(undefined, "nothing here", now)).toBeUndefined();
  });

  it("reads retry_after from the body", () => {
    expect(mapHttpError(429, { error: { message: "slow", retry_after: 4 } }, undefined).retryAfterSeconds).toBe(4);
  });
});

describe("network errors", () => {
  it("a reset is a connection error, a caller abort is AbortedError", () => {
    const reset = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
    const mapped = mapNetworkError(reset, undefined);
    expect(mapped).toBeInstanceOf(ProviderError);
    expect(mapped).toMatchObject({ kind: "connection", retryable: true });
    const controller = new AbortController();
    controller.abort();
    expect(mapNetworkError(new Error("aborted"), controller.signal)).toBeInstanceOf(AbortedError);
    const timeout = Object.assign(new TypeError("fetch failed"), { cause: { code: "UND_ERR_CONNECT_TIMEOUT" } });
    expect(mapNetworkError(timeout, undefined)).toMatchObject({ kind: "timeout" });
  });
});

describe("tool arguments", () => {
  it("parses, repairs or reports", () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ arguments: { a: 1 } });
    expect(parseToolArguments("")).toEqual({ arguments: {} });
    expect(parseToolArguments('{"a": 1, "b": "x"')).toEqual({ arguments: { a: 1, b: "x" } });
    expect(parseToolArguments("[1,2]").parseError).toMatch(/object/);
    expect(parseToolArguments("{{{{::").parseError).toMatch(/invalid JSON/);
  });
});

describe("a JSON body where a stream was expected", () => {
  it("with an error inside maps that error; otherwise is invalid_response", async () => {
    const fake = await startFakeLLM();
    try {
      fake.enqueue(
        { kind: "raw", body: JSON.stringify({ error: { message: "Overloaded", type: "overloaded_error" } }), contentType: "application/json" },
        { kind: "raw", body: JSON.stringify({ choices: [{ message: { content: "hi" } }] }), contentType: "application/json" },
      );
      const first = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
      expect(first.error).toMatchObject({ kind: "overloaded" });
      const second = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
      expect(second.error).toMatchObject({ kind: "invalid_response", retryable: false });
    } finally {
      await fake.close();
    }
  });
});
