/**
 * Category 5 (gateway) — bearer auth on every route (missing, wrong, near-miss keys, path
 * spellings that might dodge the check), `/health` open, the key compared with
 * `crypto.timingSafeEqual` (observed through a spy, not by reading the source), refusal to bind
 * a non-loopback host without a key, and the DNS-rebinding Host/Origin checks on `/mcp`.
 */
import type * as Crypto from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { checkBindAllowed, startRuntimeGateway } from "../../src/gateway/runtime-gateway.js";
import type { RunningGateway } from "../../src/gateway/runtime-gateway.js";
import { rejectedHost } from "../../src/gateway/host-check.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startRuntime } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

const compares = vi.hoisted(() => ({ calls: [] as Array<[number, number]> }));
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof Crypto>();
  return {
    ...real,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compares.calls.push([a.byteLength, b.byteLength]);
      return real.timingSafeEqual(a, b);
    },
  };
});

const KEY = "gw-test-SECRET-auth-7f3a9c";
let fake: FakeLLM;
let fx: RuntimeFixture;
let gw: RunningGateway | undefined;
const figures = { routes: 0, refused401: 0, rebinding403: 0, bindRefusals: 0 };

beforeEach(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake, { extra: { gateway: { host: "127.0.0.1", apiKey: KEY } } });
});
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await fx.close();
  await fake.close();
});
afterAll(() => {
  console.log(
    `security (gateway): ${figures.routes} routes × 6 bad credentials → ${figures.refused401} refused with 401, ${figures.rebinding403} rebinding attempts refused (403, or 400 from Node for unparsable Hosts), ${figures.bindRefusals} unsafe binds refused`,
  );
});

async function start(): Promise<string> {
  gw = await startRuntimeGateway(fx.runtime, { port: 0 });
  return gw.server.url;
}

/** A raw HTTP request, so `Host` and odd paths go out exactly as written. */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers: { ...headers, ...(body ? { "content-length": String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ROUTES: Array<[string, string, string?]> = [
  ["GET", "/v1/models"],
  ["POST", "/v1/chat/completions", JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }] })],
  ["GET", "/api/info"],
  ["GET", "/api/threads"],
  ["POST", "/api/threads", "{}"],
  ["POST", "/api/threads/abc/switch", "{}"],
  ["DELETE", "/api/threads/abc"],
  ["GET", "/api/messages"],
  ["POST", "/api/stop", "{}"],
  ["POST", "/api/chat", JSON.stringify({ content: "hi" })],
  ["POST", "/mcp", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } })],
  ["GET", "/v1/does-not-exist"],
];

const BAD_CREDENTIALS: Array<Record<string, string>> = [
  {},
  { authorization: "Bearer wrong-key" },
  { authorization: `Bearer ${KEY}x` },
  { authorization: `Bearer ${KEY.slice(0, -1)}` },
  { authorization: `Basic ${Buffer.from(`user:${KEY}`).toString("base64")}` },
  { authorization: KEY, "x-api-key": KEY },
];

describe("gateway authentication", () => {
  it("every protected route refuses missing, wrong and near-miss keys with 401; the right key passes", async () => {
    const url = await start();
    const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    for (const [method, path, body] of ROUTES) {
      figures.routes++;
      for (const creds of BAD_CREDENTIALS) {
        const res = await raw(url, method, path, { ...base, ...creds }, body);
        expect(res.status, `${method} ${path} with ${JSON.stringify(creds)}`).toBe(401);
        expect(JSON.parse(res.text)).toMatchObject({ error: { type: expect.any(String) } });
        figures.refused401++;
      }
      if (path === "/v1/chat/completions" || path === "/api/chat") fake.enqueue({ text: "authorised" });
      const ok = await raw(url, method, path, { ...base, authorization: `bearer ${KEY}` }, body);
      expect(ok.status, `${method} ${path} with the key`).not.toBe(401);
    }
  });

  it("path spellings never reach a protected handler without the key", async () => {
    const url = await start();
    for (const path of ["/V1/models", "//v1/models", "/v1//models", "/%76%31/models", "/v1/./models", "/x/../v1/models", "/api/../v1/models", "/MCP", "/v1/models?x=/health", "/health/../v1/models"]) {
      const res = await raw(url, "GET", path, {});
      expect([401, 404], `${path} → ${res.status} ${res.text.slice(0, 80)}`).toContain(res.status);
      expect(res.text).not.toContain('"object":"list"');
    }
  });

  it("/health answers without a key", async () => {
    const url = await start();
    const res = await raw(url, "GET", "/health", {});
    expect(res).toMatchObject({ status: 200 });
    expect(JSON.parse(res.text)).toEqual({ status: "ok" });
  });

  it("compares keys with crypto.timingSafeEqual on equal-length digests", async () => {
    const url = await start();
    compares.calls.length = 0;
    await raw(url, "GET", "/v1/models", { authorization: "Bearer short" });
    await raw(url, "GET", "/v1/models", { authorization: `Bearer ${"a-much-longer-key-than-the-real-one-".repeat(4)}` });
    expect(compares.calls.length).toBeGreaterThanOrEqual(2);
    // Digests: the length of the presented key cannot change the work done.
    for (const [a, b] of compares.calls) expect([a, b]).toEqual([32, 32]);
  });
});

describe("binding", () => {
  it.each(["0.0.0.0", "::", "192.168.1.20", "nanobot.example.com"])("refuses %s without gateway.apiKey", async (host) => {
    expect(() => checkBindAllowed(host, undefined)).toThrow(ConfigError);
    const open = await startRuntime(fake, { extra: { gateway: { host } } });
    try {
      await expect(startRuntimeGateway(open.runtime, { port: 0 })).rejects.toThrow(/refusing to listen on .* without an API key/);
      figures.bindRefusals++;
    } finally {
      await open.close();
    }
  });

  it.each(["127.0.0.1", "localhost", "::1"])("allows loopback %s without a key", (host) => {
    expect(() => checkBindAllowed(host, undefined)).not.toThrow();
  });

  it("binds 0.0.0.0 when a key is set, and still demands it", async () => {
    const keyed = await startRuntime(fake, { extra: { gateway: { host: "0.0.0.0", apiKey: KEY } } });
    const running = await startRuntimeGateway(keyed.runtime, { port: 0 });
    try {
      const port = new URL(running.server.url).port;
      expect((await raw(`http://127.0.0.1:${port}`, "GET", "/v1/models", {})).status).toBe(401);
    } finally {
      await running.close();
      await keyed.close();
    }
  });
});

describe("DNS rebinding on /mcp (loopback bind)", () => {
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } });
  const mcpHeaders = { authorization: `Bearer ${KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream" };

  it.each([
    ["Host", "evil.example"],
    ["Host", "localhost.evil.example"],
    ["Host", "127.0.0.1.nip.io"],
    ["Host", "evil.example:80"],
    ["Host", "0.0.0.0"],
    ["Host", "[::1].evil.example"],
    ["Origin", "http://evil.example"],
    ["Origin", "http://localhost.evil.example"],
    ["Origin", "null"],
    ["Origin", "http://127.0.0.1.evil.example:8080"],
  ])("refuses %s: %s with 403", async (header, value) => {
    const url = await start();
    const headers: Record<string, string> = { ...mcpHeaders, host: new URL(url).host, [header.toLowerCase()]: value };
    const res = await raw(url, "POST", "/mcp", headers, init);
    // Node itself answers 400 to a Host it cannot parse; either way the handler never runs.
    expect([400, 403]).toContain(res.status);
    if (res.status === 403) expect(res.text).toMatch(/not allowed|Forbidden/);
    figures.rebinding403++;
    // The check on its own, as any other server in front of it could pass the header through.
    expect(rejectedHost(new Headers({ host: header === "Host" ? value : "127.0.0.1:8080", ...(header === "Origin" ? { origin: value } : {}) }))).toMatch(/not allowed/);
  });

  it.each([["localhost"], ["127.0.0.1"], ["[::1]"]])("accepts Host %s with its own Origin", async (name) => {
    const url = await start();
    const port = new URL(url).port;
    const res = await raw(url, "POST", "/mcp", { ...mcpHeaders, host: `${name}:${port}`, origin: `http://${name}:${port}` }, init);
    expect(res.status).toBe(200);
  });
});
