/**
 * A Runtime over a Go-style config (`llmProviders` + a named agent) whose provider speaks OpenAI
 * Responses at a fake's URL: the shape under which a Go agent sends no output limit of its own.
 */
import { join } from "node:path";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";

export function goResponsesRuntime(options: { root: string; baseURL: string; agent: string; settings?: Record<string, unknown> }): Runtime {
  const env = { HOME: options.root, NANOBOT_HOME: join(options.root, "home") };
  const { config } = resolveConfig(
    {
      llmProviders: { fake: { dialect: "OpenAIResponses", baseURL: options.baseURL, apiKey: "sk-go-limit-0001" } },
      agents: { [options.agent]: { model: "fake/m", instructions: "You help.", ...options.settings } },
    },
    { env, cwd: options.root },
  );
  return new Runtime({ config, home: env.NANOBOT_HOME, env, connectMcp: false });
}
