import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../../src/config/index.js";
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
