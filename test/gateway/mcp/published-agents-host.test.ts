import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../../src/config/index.js";
import { publishedAgents } from "../../../src/gateway/mcp/published-agents.js";

const configOf = (raw: Record<string, unknown>) => resolveConfig(raw, { env: {}, envProviders: false }).config;

describe("publishedAgents", () => {
  it("publishes the default agent when no named agent exists", () => {
    expect(publishedAgents(configOf({})).map((a) => [a.agent, a.toolName])).toEqual([["nanobot", "chat-with-nanobot"]]);
  });

  it("publishes the entrypoint agents, sanitising tool names; chat: false alone is not the entrypoint", () => {
    const config = configOf({ agents: { alpha: {}, beta: { chat: false }, "gamma ray": {} }, publish: { entrypoint: ["alpha", "gamma ray"] } });
    expect(publishedAgents(config).map((a) => a.toolName)).toEqual(["chat-with-alpha", "chat-with-gamma_ray"]);
    expect(publishedAgents(configOf({ agents: { alpha: {}, beta: { chat: false } } })).map((a) => a.agent)).toEqual(["alpha"]);
  });

  it("several chat agents without publish.entrypoint (Go refuses): only the default one, with a warning", () => {
    const { config, warnings } = resolveConfig({ agents: { alpha: {}, beta: { default: true } } }, { env: {}, envProviders: false });
    expect(publishedAgents(config).map((a) => a.agent)).toEqual(["beta"]);
    expect(warnings.join("\n")).toContain("publish.entrypoint is not set and there are 2 chat agents (alpha, beta)");
  });

  it("publish.entrypoint wins, unknown names in it are ignored", () => {
    const config = configOf({ agents: { alpha: {}, beta: {} }, publish: { entrypoint: ["beta", "ghost"] } });
    expect(publishedAgents(config).map((a) => a.agent)).toEqual(["beta"]);
  });

  it("publishes no agent when the config only re-exports MCP servers (a Go aggregator)", () => {
    expect(publishedAgents(configOf({ publish: { mcpServers: ["store"] }, mcpServers: { store: { url: "http://127.0.0.1:1/mcp" } } }))).toEqual([]);
  });

  it("falls back to the default agent when every named agent opted out", () => {
    expect(publishedAgents(configOf({ agents: { alpha: { chat: false } } })).map((a) => a.agent)).toEqual(["nanobot"]);
  });
});
