import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnOptions, TurnProcessor, TurnReply, TurnRequest } from "../../src/agent/turn-processor.js";
import { AbortedError } from "../../src/core/errors.js";
import { createGatewayApp } from "../../src/gateway/app.js";
import type { GatewayDeps } from "../../src/gateway/types.js";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";

/** Answers "echo: <text>" and records each request; `hang` waits for the abort. */
class ScriptedProcessor implements TurnProcessor {
  readonly requests: TurnRequest[] = [];
  hang = false;
  fail?: string;
  async process(request: TurnRequest, options: TurnOptions = {}): Promise<TurnReply> {
    this.requests.push(request);
    if (this.hang) {
      await new Promise<void>((_, reject) => options.signal?.addEventListener("abort", () => reject(new AbortedError())));
    }
    const text = typeof request.content === "string" ? request.content : "(parts)";
    options.onEvent?.({ type: "text_delta", delta: "echo: " });
    options.onEvent?.({ type: "text_delta", delta: text });
    const base = { content: `echo: ${text}`, sessionKey: request.sessionKey, toolsUsed: [], usage: { promptTokens: 3, completionTokens: 2 } };
    return this.fail ? { ...base, content: "", stopReason: "error", error: this.fail } : { ...base, stopReason: "completed" };
  }
}

let root: string;
let store: SqliteSessionStore;
let processor: ScriptedProcessor;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-gw-app-"));
  store = new SqliteSessionStore({ path: join(root, "state.db") });
  processor = new ScriptedProcessor();
});
afterEach(async () => {
  await store.close();
  await rm(root, { recursive: true, force: true });
});

function makeApp(extra: Partial<GatewayDeps> = {}) {
  return createGatewayApp({ processor, agents: ["helper"], store, ...extra }).app;
}

const chat = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

describe("routes and auth", () => {
  it("/health answers without a key; API routes need it (401 in OpenAI's shape)", async () => {
    const app = makeApp({ apiKey: "k-123" });
    expect(await (await app.request("/health")).json()).toEqual({ status: "ok" });
    const denied = await app.request("/v1/models");
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({
      error: { message: expect.stringContaining("Incorrect API key") as unknown, type: "invalid_request_error", param: null, code: "invalid_api_key" },
    });
    expect((await app.request("/v1/models", { headers: { authorization: "Bearer k-124" } })).status).toBe(401);
    expect((await app.request("/api/threads", { headers: { authorization: "Bearer k-123" } })).status).toBe(200);
    const ok = await app.request("/v1/models", { headers: { authorization: "Bearer k-123" } });
    expect((await ok.json()) as unknown).toMatchObject({ object: "list", data: [{ id: "nanobot", object: "model" }, { id: "helper" }] });
    expect(processor.requests).toHaveLength(0);
  });

  it("serves the UI's static files without a key and never outside the root", async () => {
    const web = join(root, "web");
    await mkdir(join(web, "assets"), { recursive: true });
    await writeFile(join(web, "index.html"), "<h1>ui</h1>");
    await writeFile(join(web, "assets", "app.js"), "console.log(1)");
    await writeFile(join(root, "secret.txt"), "nope");
    const app = makeApp({ apiKey: "k-123", webRoot: web });
    const index = await app.request("/");
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toContain("text/html");
    expect(await index.text()).toBe("<h1>ui</h1>");
    expect((await app.request("/assets/app.js")).headers.get("content-type")).toContain("javascript");
    expect((await app.request("/..%2Fsecret.txt")).status).toBe(404);
    expect((await app.request("/assets/missing.js")).status).toBe(404);
  });

  it("CORS is off by default: no Access-Control headers", async () => {
    const res = await makeApp().request("/v1/models", { headers: { origin: "https://evil.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("/v1/chat/completions input", () => {
  it("uses x-session-id, else api:default, and maps the model to the agent", async () => {
    const app = makeApp();
    await app.request("/v1/chat/completions", chat({ model: "nanobot", messages: [{ role: "user", content: "a" }] }));
    await app.request("/v1/chat/completions", chat({ model: "helper", messages: [{ role: "user", content: "b" }] }, { "x-session-id": "hdr" }));
    await app.request("/v1/chat/completions", chat({ model: "nanobot", session_id: "body", messages: [{ role: "user", content: "c" }] }, { "x-session-id": "hdr" }));
    expect(processor.requests.map((r) => [r.sessionKey, r.agent, r.content])).toEqual([
      ["api:default", undefined, "a"],
      ["api:hdr", "helper", "b"],
      ["api:body", undefined, "c"],
    ]);
  });

  it("bad JSON, no user message and a bad field are 400s naming the problem", async () => {
    const app = makeApp();
    const badJson = await app.request("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(badJson.status).toBe(400);
    const noUser = await app.request("/v1/chat/completions", chat({ model: "nanobot", messages: [{ role: "system", content: "x" }] }));
    expect(noUser.status).toBe(400);
    expect(((await noUser.json()) as { error: { param: string } }).error.param).toBe("messages");
    const noModel = await app.request("/v1/chat/completions", chat({ messages: [{ role: "user", content: "x" }] }));
    expect(((await noModel.json()) as { error: { param: string } }).error.param).toBe("model");
  });

  it("fields of the wrong type are 400s naming the field, whether or not the request is a plain text one", async () => {
    const app = makeApp();
    const user = [{ role: "user", content: "x" }];
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: "", messages: user }, "model"],
      [{ model: 7, messages: user }, "model"],
      [{ model: "nanobot", messages: [] }, "messages"],
      [{ model: "nanobot", messages: "hi" }, "messages"],
      [{ model: "nanobot", messages: [null] }, "messages.0"],
      [{ model: "nanobot", messages: [{ content: "x" }] }, "messages.0.role"],
      [{ model: "nanobot", messages: [{ role: "user", content: 5 }] }, "messages.0.content"],
      [{ model: "nanobot", messages: [{ role: "tool", content: "r", tool_call_id: 3 }] }, "messages.0.tool_call_id"],
      [{ model: "nanobot", messages: user, stream: "yes" }, "stream"],
      [{ model: "nanobot", messages: user, session_id: "" }, "session_id"],
      [{ model: "nanobot", messages: user, session_id: "s".repeat(201) }, "session_id"],
      [{ model: "nanobot", messages: user, stream_options: { include_usage: "yes" } }, "stream_options.include_usage"],
      [{ model: "nanobot", messages: user, tools: [{ type: "function", function: { name: "bad name" } }] }, "tools.0.function.name"],
    ];
    for (const [body, param] of cases) {
      const res = await app.request("/v1/chat/completions", chat(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param, JSON.stringify(body)).toBe(param);
    }
    // At the limits, and with the optional fields null, the request is taken.
    const taken = [
      { model: "nanobot", messages: user, session_id: "s".repeat(200), stream: null, stream_options: null, tools: null },
      { model: "nanobot", messages: [{ role: "system", content: null }, { role: "user", content: "y", extra: 1 }], stream: false },
    ];
    for (const body of taken) expect((await app.request("/v1/chat/completions", chat(body))).status, JSON.stringify(body)).toBe(200);
    expect(processor.requests.map((r) => [r.sessionKey, r.content])).toEqual([
      [`api:${"s".repeat(200)}`, "x"],
      ["api:default", "y"],
    ]);
    expect(processor.requests).toHaveLength(2);
  });

  it("a body over the limit is a 413 and no turn runs", async () => {
    const app = makeApp({ maxBodyBytes: 1024 });
    const res = await app.request("/v1/chat/completions", chat({ model: "nanobot", messages: [{ role: "user", content: "x".repeat(5000) }] }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("request_too_large");
    expect(processor.requests).toHaveLength(0);
  });
});

describe("/v1/chat/completions outcomes", () => {
  it("a turn longer than the request timeout is stopped and answered with 504", async () => {
    processor.hang = true;
    const res = await makeApp({ requestTimeoutMs: 50 }).request("/v1/chat/completions", chat({ model: "nanobot", messages: [{ role: "user", content: "slow" }] }));
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: { type: "timeout_error", code: "timeout" } });
  });

  it("a failed turn is a 502 in OpenAI's shape", async () => {
    processor.fail = "provider exploded";
    const res = await makeApp().request("/v1/chat/completions", chat({ model: "nanobot", messages: [{ role: "user", content: "x" }] }));
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringContaining("provider exploded") as unknown, type: "server_error" } });
  });

  it("with no provider configured every reply is the setup help, streamed or not", async () => {
    const app = makeApp({ setupHelp: "no LLM provider is configured: run `nanobot onboard`" });
    const res = await app.request("/v1/chat/completions", chat({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }));
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toContain("nanobot onboard");
    const sse = await (await app.request("/v1/chat/completions", chat({ model: "nanobot", stream: true, messages: [{ role: "user", content: "hi" }] }))).text();
    expect(sse).toContain("nanobot onboard");
    expect(sse.trim().endsWith("data: [DONE]")).toBe(true);
    expect(processor.requests).toHaveLength(0);
  });

  it("streams SSE lines exactly like OpenAI: role chunk, content chunks, finish chunk, [DONE]", async () => {
    const res = await makeApp().request("/v1/chat/completions", chat({ model: "nanobot", stream: true, messages: [{ role: "user", content: "hi" }] }));
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = (await res.text()).split("\n\n").filter(Boolean);
    expect(events.every((e) => e.startsWith("data: "))).toBe(true);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: Array<{ delta: unknown; finish_reason: unknown }> });
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ role: "assistant", content: "", refusal: null }, null],
      [{ content: "echo: " }, null],
      [{ content: "hi" }, null],
      [{}, "stop"],
    ]);
  });
});
