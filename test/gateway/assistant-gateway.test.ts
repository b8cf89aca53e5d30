import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import WebSocket from "ws";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { textOf } from "../../src/core/message-helpers.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let root: string;
let fake: FakeLLM;
let assistant: RunningAssistant;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-assistant-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
  const env = { HOME: root, NANOBOT_HOME: home };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-assistant-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      channels: { websocket: { enabled: true, token: "ws-secret", allowFrom: ["*"] } },
    },
    { env, cwd: root },
  );
  const runtime = new Runtime({ config, home, env });
  assistant = await startAssistantGateway(runtime, { port: 0 });
});
afterEach(async () => {
  await assistant.close();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

describe("the assembled assistant gateway", () => {
  it("answers the OpenAI API through the AgentLoop, where slash commands never reach the model", async () => {
    const client = new OpenAI({ baseURL: `${assistant.gateway.server.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const help = await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "/help" }] });
    expect(help.choices[0]?.message.content).toContain("/new");
    expect(fake.requests).toHaveLength(0);

    fake.enqueue({ text: "Hi from the loop" });
    const reply = await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "hello" }] });
    expect(reply.choices[0]?.message.content).toBe("Hi from the loop");
    // The AgentLoop's context builder wrote the system prompt (workspace bootstrap, tools, skills).
    const system = (fake.requests[0]?.body.messages as Array<{ role: string; content: string }>)[0];
    expect(system?.role).toBe("system");
    expect(system?.content).toContain("# Using tools");
    fake.assertDone();
  });

  it("starts the enabled WebSocket channel on the gateway's own port and replies through the bus", async () => {
    expect(assistant.channelResults).toEqual([expect.objectContaining({ name: "websocket", ok: true })]);
    fake.enqueue({ text: "pong" });
    const wsUrl = `${assistant.gateway.server.url.replace("http", "ws")}/ws?token=ws-secret&chatId=chat-1`;
    const socket = new WebSocket(wsUrl);
    const frames: Array<Record<string, unknown>> = [];
    const reply = new Promise<Record<string, unknown>>((resolve, reject) => {
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString()) as Record<string, unknown>;
        frames.push(frame);
        if (frame.type === "ready") socket.send(JSON.stringify({ type: "message", content: "ping" }));
        if (frame.type === "message") resolve(frame);
      });
      socket.on("error", reject);
    });
    const message = await reply;
    socket.close();
    expect(message).toMatchObject({ type: "message", chatId: "chat-1", content: "pong" });
    // The turn ran in the channel's session, scoped to the client's issued id, and was saved there.
    const clientId = String(frames.find((f) => f.type === "ready")?.clientId).split(".")[0];
    const history = await assistant.loop.runtime.store().loadMessages(`websocket:${clientId}:chat-1`);
    expect(history.map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "ping"],
      ["assistant", "pong"],
    ]);
    fake.assertDone();
  });

  it("serves /mcp: an MCP SDK client lists and calls chat-with-nanobot on the running gateway", async () => {
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${assistant.gateway.server.url}/mcp`)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["chat-with-nanobot"]);
      fake.enqueue({ text: "hello over MCP" });
      const result = await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "hi" } });
      expect(result.isError).not.toBe(true);
      expect(result.content).toEqual([{ type: "text", text: "hello over MCP" }]);
      fake.assertDone();
    } finally {
      await client.close();
    }
  });

  it("refuses a WebSocket client without the token", async () => {
    const socket = new WebSocket(`${assistant.gateway.server.url.replace("http", "ws")}/ws`);
    const status = await new Promise<number | undefined>((resolve) => {
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode));
      socket.on("open", () => resolve(undefined));
      socket.on("error", () => resolve(-1));
    });
    expect(status).toBe(401);
  });

  it("shows the SQLite store's background WAL checkpointer on /metrics: it checkpoints after turns, sleeps while idle, and a turn wakes it", async () => {
    const url = assistant.gateway.server.url;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
    const read = async (): Promise<{ checkpoints: number; idle: number }> => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const sample = (name: string): number => Number(text.split("\n").find((l) => l.startsWith(`${name} `))?.slice(name.length + 1));
      return { checkpoints: sample("nanobot_wal_checkpoints_total"), idle: sample("nanobot_wal_checkpointer_idle") };
    };
    const until = async (done: (m: { checkpoints: number; idle: number }) => boolean): Promise<{ checkpoints: number; idle: number }> => {
      for (let i = 0; ; i++) {
        const m = await read();
        if (done(m)) return m;
        if (i > 400) throw new Error(`the checkpointer never got there: ${JSON.stringify(m)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    fake.enqueue({ text: "one" });
    await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "first" }] });
    // After the turn's commits it checkpoints on its timer, then finds nothing new and sleeps.
    const idle = await until((m) => m.checkpoints >= 1 && m.idle === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await read()).toEqual(idle);
    fake.enqueue({ text: "two" });
    await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "second" }] });
    // The turn's commits woke it; it checkpoints them and goes back to sleep.
    expect((await read()).idle).toBe(0);
    const after = await until((m) => m.idle === 1);
    expect(after.checkpoints).toBeGreaterThan(idle.checkpoints);
  });
});
