/**
 * The gateway's turns (AgentLoop and DirectTurnProcessor, the two ways a face runs a turn)
 * carry the Go agent features too: a named agent's response hook (an MCP tool call) rewrites
 * the answer the OpenAI API returns, its permissions decide the built-ins offered, and its
 * MCP tools keep their bare names.
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { TURN_PROCESSORS, startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
const hookServer = join(repo, "test/mcp/servers/go-hooks-server.ts");

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe.each(TURN_PROCESSORS)("Go agent features through the gateway with %s", (_name, makeProcessor) => {
  it("a response hook rewrites the answer, permissions and bare MCP names shape the tools offered", async () => {
    fx = await startGatewayFixture({
      ...(makeProcessor ? { makeProcessor } : {}),
      named: {
        main: {
          instructions: "Main agent.",
          tools: ["hooks/get_weather", "read_file", "exec"],
          permissions: { bash: "deny" },
          hooks: { response: ["hooks/response_rewrite"] },
        },
      },
      extra: { mcpServers: { hooks: { command: process.execPath, args: ["--import", tsxLoader, hookServer] } } },
    });
    fx.fake.enqueue({ text: "hello from the model" });
    const client = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const done = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "hi" }] });
    expect(done.choices[0]?.message.content).toBe("rewritten: hello from the model");
    const body = fx.fake.requests[0]!.body as unknown as { tools?: Array<{ function: { name: string } }> };
    expect((body.tools ?? []).map((t) => t.function.name).sort()).toEqual(["get_weather", "read_file"]);
  }, 60_000);
});
