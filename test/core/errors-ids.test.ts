import { describe, expect, it } from "vitest";
import {
  AbortedError,
  ConfigError,
  ContextOverflowError,
  ProviderError,
  errorMessage,
  isAbortError,
  throwIfAborted,
} from "../../src/core/errors.js";
import { newId } from "../../src/core/ids.js";
import { textOf, toolCallsOf, assistantMessage, userMessage } from "../../src/core/message-helpers.js";

describe("error classes", () => {
  it("ProviderError derives retryable from its kind unless told", () => {
    expect(new ProviderError("x", { kind: "rate_limit", status: 429 }).retryable).toBe(true);
    expect(new ProviderError("x", { kind: "quota", status: 429 }).retryable).toBe(false);
    expect(new ProviderError("x", { kind: "auth", status: 401 }).retryable).toBe(false);
    expect(new ProviderError("x", { kind: "server", status: 500, retryable: false }).retryable).toBe(false);
  });

  it("ContextOverflowError is a non-retryable ProviderError of kind context_overflow", () => {
    const e = new ContextOverflowError("too long", { status: 400 });
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.kind).toBe("context_overflow");
    expect(e.retryable).toBe(false);
    expect(e.code).toBe("context_overflow");
    expect(e.name).toBe("ContextOverflowError");
  });

  it("ConfigError carries file, key path and expectation", () => {
    const e = new ConfigError("config.json: a.b: expected x", { file: "config.json", path: "a.b", expected: "x" });
    expect([e.file, e.path, e.expected, e.code]).toEqual(["config.json", "a.b", "x", "config_error"]);
  });

  it("abort helpers recognise aborts", () => {
    const ac = new AbortController();
    expect(() => throwIfAborted(ac.signal)).not.toThrow();
    ac.abort();
    expect(() => throwIfAborted(ac.signal)).toThrow(AbortedError);
    const domAbort = new Error("aborted");
    domAbort.name = "AbortError";
    expect(isAbortError(domAbort)).toBe(true);
    expect(isAbortError(new Error("other"))).toBe(false);
    expect(errorMessage({ a: 1 })).toBe('{"a":1}');
  });
});

describe("ids", () => {
  it("are unique and sort by creation order", () => {
    const ids = Array.from({ length: 2000 }, () => newId("msg"));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^msg_[0-9a-z]{20}$/);
  });
});

describe("message helpers", () => {
  it("build messages and read text and tool calls", () => {
    const a = assistantMessage("hi", [{ type: "toolCall", id: "c1", name: "exec", arguments: {}, rawArguments: "{}" }]);
    expect(textOf(a)).toBe("hi");
    expect(toolCallsOf(a).map((c) => c.id)).toEqual(["c1"]);
    expect(toolCallsOf(userMessage("x"))).toEqual([]);
  });
});
