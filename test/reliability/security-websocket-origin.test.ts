/**
 * Category 5 (gateway) — WebSocket upgrades as a web page can make them, against the assembled
 * gateway (`startAssistantGateway`, the WebSocket channel on the gateway's own port): a foreign
 * `Origin` or a rebinding `Host` is refused with 403 and the socket closed; upgrades to paths
 * nobody serves (`/ws/`, `//ws`, `/WS`, …) get 404 and a closed socket instead of hanging; an
 * empty `allowFrom` without a token pairs instead of admitting everyone.
 */
import { connect as netConnect } from "node:net";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let root: string;
let fake: FakeLLM;
let assistant: RunningAssistant | undefined;
const figures = { refused: 0, unknownPaths: 0 };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-ws-origin-"));
  fake = await startFakeLLM();
});
afterEach(async () => {
  await assistant?.close();
  assistant = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});
afterAll(() => {
  console.log(`security (websocket, browser): ${figures.refused} foreign Origin/Host upgrades refused with 403, ${figures.unknownPaths} unknown-path upgrades answered 404 and closed`);
});

async function start(channels: Record<string, unknown>, gateway: Record<string, unknown> = {}): Promise<string> {
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  const env = { HOME: root, NANOBOT_HOME: home };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-ws-origin-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      gateway: { host: "127.0.0.1", ...gateway },
      channels,
    },
    { env, cwd: root },
  );
  assistant = await startAssistantGateway(new Runtime({ config, home, env }), { port: 0 });
  return new URL(assistant.gateway.server.url).port;
}

interface RawUpgrade {
  status: number;
  text: string;
}

/**
 * Sends an upgrade request exactly as written and reads until the server closes the socket.
 * A server that never answers, or answers but leaves the socket open, fails after 5 s.
 */
function rawUpgrade(port: string, path: string, headers: Record<string, string> = {}): Promise<RawUpgrade> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(port), "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`upgrade to ${path} left hanging (${text ? `answered ${JSON.stringify(text.split("\r\n")[0])} but not closed` : "no answer"})`));
    }, 5_000);
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: ${headers.host ?? `127.0.0.1:${port}`}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Version: 13",
      ...Object.entries(headers)
        .filter(([k]) => k !== "host")
        .map(([k, v]) => `${k}: ${v}`),
    ];
    socket.on("connect", () => socket.write(`${lines.join("\r\n")}\r\n\r\n`));
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
  });
}

interface Opened {
  socket: WebSocket;
  frames: Array<Record<string, unknown>>;
  next(type: string): Promise<Record<string, unknown>>;
}

function open(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  const socket = new WebSocket(url, { headers });
  const frames: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  socket.on("message", (data: Buffer) => {
    frames.push(JSON.parse(data.toString()) as Record<string, unknown>);
    for (const w of waiters.splice(0)) w();
  });
  const next = (type: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} frame; got ${JSON.stringify(frames)}`)), 10_000);
      const check = (): void => {
        const frame = frames.find((f) => f.type === type);
        if (frame) {
          clearTimeout(timer);
          frames.splice(frames.indexOf(frame), 1);
          resolve(frame);
        } else waiters.push(check);
      };
      check();
    });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve({ socket, frames, next }));
    socket.once("error", reject);
  });
}

describe("WebSocket upgrades from a web page", () => {
  it.each([
    ["Origin", "http://evil.example"],
    ["Origin", "null"],
    ["Origin", "http://localhost:5173"],
    ["Origin", "http://127.0.0.1.evil.example"],
    ["Host", "evil.example:PORT"],
    ["Host", "localhost.evil.example"],
  ])("a foreign %s (%s) is refused with 403 and the socket closed, even with the token", async (header, value) => {
    const port = await start({ websocket: { enabled: true, token: "ws-secret" } });
    const res = await rawUpgrade(port, "/ws?token=ws-secret", { [header.toLowerCase()]: value.replace("PORT", port) });
    expect(res.status, res.text).toBe(403);
    expect(res.text).toMatch(/"code":"(origin|host)_not_allowed"/);
    figures.refused++;
    expect(fake.requests).toHaveLength(0);
  });

  it("the channel's own origin, and clients without an Origin, connect", async () => {
    const port = await start({ websocket: { enabled: true, token: "ws-secret" } });
    const own = await open(`ws://127.0.0.1:${port}/ws?token=ws-secret`, { origin: `http://127.0.0.1:${port}` });
    await own.next("ready");
    own.socket.close();
    const script = await open(`ws://localhost:${port}/ws?token=ws-secret`);
    await script.next("ready");
    script.socket.close();
  });

  it("gateway.allowedOrigins admits a listed page", async () => {
    const port = await start({ websocket: { enabled: true, token: "ws-secret" } }, { allowedOrigins: ["https://app.example.com"] });
    const listed = await open(`ws://127.0.0.1:${port}/ws?token=ws-secret`, { origin: "https://app.example.com" });
    await listed.next("ready");
    listed.socket.close();
    expect((await rawUpgrade(port, "/ws?token=ws-secret", { origin: "https://other.example.com" })).status).toBe(403);
  });

  it("upgrades to paths nobody serves get 404 and a closed socket, never a hang", async () => {
    const port = await start({ websocket: { enabled: true, token: "ws-secret" } });
    for (const path of ["/ws/", "//ws", "/WS", "/other", "/ws%2F", "/ws/../ws", "/v1/chat/completions", "/"]) {
      const res = await rawUpgrade(port, `${path}?token=ws-secret`);
      expect(res.status, `${path}: ${res.text}`).toBe(404);
      expect(res.text).toContain("WebSocket endpoints here: /ws");
      figures.unknownPaths++;
    }
  });

  it("with no WebSocket channel enabled, any upgrade gets 404 and a closed socket", async () => {
    const port = await start({});
    for (const path of ["/ws", "/mcp", "/"]) {
      const res = await rawUpgrade(port, path);
      expect(res.status, path).toBe(404);
      expect(res.text).toContain("no WebSocket channel is enabled");
      figures.unknownPaths++;
    }
  });
});

describe("an empty allowFrom on the WebSocket channel", () => {
  it("without a token: a new client is offered a pairing code and nothing reaches the agent", async () => {
    const port = await start({ websocket: { enabled: true } });
    const client = await open(`ws://127.0.0.1:${port}/ws`);
    await client.next("ready");
    client.socket.send(JSON.stringify({ type: "message", content: "run exec: rm -rf ~" }));
    const reply = await client.next("message");
    expect(String(reply.content)).toMatch(/pairing code: \w+/i);
    client.socket.close();
    expect(fake.requests).toHaveLength(0);
  });

  it("with a token: the client that presented it is admitted (the token is the credential)", async () => {
    const port = await start({ websocket: { enabled: true, token: "ws-secret" } });
    fake.enqueue({ text: "pong" });
    const client = await open(`ws://127.0.0.1:${port}/ws?token=ws-secret`);
    await client.next("ready");
    client.socket.send(JSON.stringify({ type: "message", content: "ping" }));
    expect((await client.next("message")).content).toBe("pong");
    client.socket.close();
    expect(fake.requests).toHaveLength(1);
  });
});
