/**
 * `GET /api/events` on the assembled gateway: a `turn_completed` event (session, usage, stop
 * reason, duration) for each turn, whichever face ran it, behind the Host check and the key.
 */
import { request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const KEY = "gw-key-events-0001";
let root: string;
let fake: FakeLLM;
let assistant: RunningAssistant;
const open: IncomingMessage[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-events-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
  const env = { HOME: root, NANOBOT_HOME: home };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-events-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      gateway: { apiKey: KEY },
    },
    { env, cwd: root, envProviders: false },
  );
  assistant = await startAssistantGateway(new Runtime({ config, home, env }), { port: 0 });
});
afterEach(async () => {
  for (const res of open.splice(0)) res.destroy();
  await assistant.close();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function get(path: string, headers: Record<string, string>): Promise<IncomingMessage> {
  const url = new URL(path, assistant.gateway.server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => {
      open.push(res);
      resolve(res);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Reads SSE frames until one with `event: name` arrives; returns its data. */
function nextEvent(res: IncomingMessage, name: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event === name && data !== undefined) {
          res.off("data", onData);
          resolve(JSON.parse(data) as Record<string, unknown>);
          return;
        }
      }
    };
    res.on("data", onData);
    res.once("end", () => reject(new Error(`stream ended before ${name}`)));
  });
}

describe("GET /api/events", () => {
  it("streams turn_completed with session, usage, stop reason and duration", async () => {
    const events = await get("/api/events", { authorization: `Bearer ${KEY}`, accept: "text/event-stream" });
    expect(events.statusCode).toBe(200);
    expect(events.headers["content-type"]).toContain("text/event-stream");
    await nextEvent(events, "ready");
    const completed = nextEvent(events, "turn_completed");

    fake.enqueue({ text: "observed", usage: { promptTokens: 12, completionTokens: 3 } });
    const client = new OpenAI({ baseURL: `${assistant.gateway.server.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "hello" }], user: "watcher" });
    expect(reply.choices[0]?.message.content).toBe("observed");

    const event = await completed;
    expect(event).toMatchObject({ type: "turn_completed", stopReason: "completed", usage: { promptTokens: 12, completionTokens: 3 }, channel: "api", toolsUsed: [] });
    expect(typeof event.sessionKey).toBe("string");
    expect(event.turnId).toMatch(/^turn/);
    expect(typeof event.durationMs).toBe("number");
    expect(Number.isNaN(Date.parse(String(event.at)))).toBe(false);
  });

  it("needs the gateway key and one of the gateway's host names", async () => {
    expect((await get("/api/events", {})).statusCode).toBe(401);
    expect((await get("/api/events", { authorization: `Bearer ${KEY}`, host: "attacker.example" })).statusCode).toBe(403);
  });
});
