import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../../src/config/index.js";
import { hostnameOf, rejectedHost } from "../../../src/gateway/mcp/host-check.js";
import { publishedAgents } from "../../../src/gateway/mcp/published-agents.js";

const configOf = (raw: Record<string, unknown>) => resolveConfig(raw, { env: {}, envProviders: false }).config;

describe("publishedAgents", () => {
  it("publishes the default agent when no named agent exists", () => {
    expect(publishedAgents(configOf({})).map((a) => [a.agent, a.toolName])).toEqual([["nanobot", "chat-with-nanobot"]]);
  });

  it("publishes every named agent except chat: false", () => {
    const config = configOf({ agents: { alpha: {}, beta: { chat: false }, "gamma ray": {} } });
    expect(publishedAgents(config).map((a) => a.toolName)).toEqual(["chat-with-alpha", "chat-with-gamma_ray"]);
  });

  it("publish.entrypoint wins, unknown names in it are ignored", () => {
    const config = configOf({ agents: { alpha: {}, beta: {} }, publish: { entrypoint: ["beta", "ghost"] } });
    expect(publishedAgents(config).map((a) => a.agent)).toEqual(["beta"]);
  });

  it("falls back to the default agent when every named agent opted out", () => {
    expect(publishedAgents(configOf({ agents: { alpha: { chat: false } } })).map((a) => a.agent)).toEqual(["nanobot"]);
  });
});

describe("Host/Origin checks", () => {
  const h = (entries: Record<string, string>): Headers => new Headers(entries);

  it("parses host header values", () => {
    expect(hostnameOf("LOCALHOST:3000")).toBe("localhost");
    expect(hostnameOf("[::1]:8080")).toBe("::1");
    expect(hostnameOf("127.0.0.1")).toBe("127.0.0.1");
  });

  it("accepts loopback hosts and origins, refuses others", () => {
    expect(rejectedHost(h({ host: "127.0.0.1:18790" }))).toBeUndefined();
    expect(rejectedHost(h({ host: "localhost", origin: "http://localhost:5173" }))).toBeUndefined();
    expect(rejectedHost(h({ host: "evil.example.com" }))).toBe('Host "evil.example.com" is not allowed');
    expect(rejectedHost(h({ host: "localhost", origin: "http://evil.example.com" }))).toBe('Origin "http://evil.example.com" is not allowed');
    expect(rejectedHost(h({}))).toBe("missing Host header");
  });

  it("honours the configured allow lists", () => {
    const options = { allowedHosts: ["bot.example.com"], allowedOrigins: ["https://app.example.com"] };
    expect(rejectedHost(h({ host: "bot.example.com:443", origin: "https://app.example.com" }), options)).toBeUndefined();
    expect(rejectedHost(h({ host: "bot.example.com", origin: "https://other.example.com" }), options)).toContain("Origin");
    expect(rejectedHost(h({ host: "anything.example" }), { allowedHosts: ["*"] })).toBeUndefined();
  });
});
