/**
 * The channels face runs Go turns too: a Go-style config's agent, reached over the gateway's
 * WebSocket channel (a real client on the assembled assistant gateway), gets its permissions,
 * bare MCP tool names and response hook (an MCP tool call on a real stdio server), and an
 * MCP-UI tool action sent as a chat message runs the tool, then the model comments.
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { loadConfig } from "../../src/config/load.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { project } from "./helpers.js";
import type { Project } from "./helpers.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
const hookServer = join(repo, "test/mcp/servers/go-hooks-server.ts");

let fake: FakeLLM | undefined;
let p: Project | undefined;
let assistant: RunningAssistant | undefined;
afterEach(async () => {
  await assistant?.close();
  await fake?.close();
  await p?.cleanup();
  assistant = fake = p = undefined;
});

/** Sends each text over one WebSocket chat and resolves with the channel's replies, in order. */
async function chat(url: string, texts: string[]): Promise<string[]> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/ws?token=ws-secret&chatId=go-chat`);
  const replies: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const queue = [...texts];
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString()) as { type: string; content?: string };
        if (frame.type === "message") replies.push(String(frame.content));
        if (frame.type !== "ready" && frame.type !== "message") return;
        const next = queue.shift();
        if (next === undefined) resolve();
        else socket.send(JSON.stringify({ type: "message", content: next }));
      });
      socket.on("error", reject);
    });
  } finally {
    socket.close();
  }
  return replies;
}

describe("a Go nanobot.yaml through the WebSocket channel", () => {
  it("permissions, bare MCP names, the response hook and an MCP-UI tool action all apply", async () => {
    fake = await startFakeLLM();
    p = await project();
    const file = await p.write("nanobot.yaml", {
      llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-go-channel-0001" } },
      agents: {
        main: {
          model: "fake/test-model",
          instructions: "Main agent.",
          tools: ["hooks/get_weather", "read_file", "exec"],
          permissions: { bash: "deny" },
          hooks: { response: ["hooks/response_rewrite"] },
        },
      },
      mcpServers: { hooks: { command: process.execPath, args: ["--import", tsxLoader, hookServer] } },
      channels: { websocket: { enabled: true, token: "ws-secret", allowFrom: ["*"] } },
    });
    const env = { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "" };
    const loaded = await loadConfig({ configPath: file, env, cwd: p.root });
    const runtime = new Runtime({ config: loaded.config, home: loaded.home, env });
    assistant = await startAssistantGateway(runtime, { port: 0 });
    expect(assistant.channelResults).toEqual([expect.objectContaining({ name: "websocket", ok: true })]);

    fake.enqueue({ text: "hello from the model" }, { text: "sunny, then" });
    const action = JSON.stringify({ type: "tool", payload: { toolName: "get_weather", params: { city: "Oslo" } } });
    const replies = await chat(assistant.gateway.server.url, ["hi", action]);
    expect(replies).toEqual(["rewritten: hello from the model", "rewritten: sunny, then"]);

    const first = fake.requests[0]!.body as { tools?: Array<{ function: { name: string } }> };
    expect((first.tools ?? []).map((t) => t.function.name).sort()).toEqual(["get_weather", "read_file"]);
    // The action's tool ran with no model call; the one model request after it reads its result.
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify((fake.requests[1]!.body as { messages: unknown[] }).messages.at(-1))).toContain("sunny in Oslo");
  }, 60_000);
});
