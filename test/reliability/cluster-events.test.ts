/**
 * Issue #24 part 2: a turn's events reach clients attached to another worker. Two
 * `nanobot gateway` processes (the built CLI) share one PostgreSQL store (a throwaway schema)
 * and one home; each has its own scripted fake LLM. A client of `/api/events` on worker B sees
 * the turns run on A; a WebSocket-channel client whose socket moved from A to B mid-turn gets
 * A's reply on B, as does one on B that a cron job on the leader A writes to; when the relay
 * connections are killed on the server, the workers reconnect, tell their event clients
 * (`resync`) and deliver the events after; and turns run by `nanobot agent` and
 * `nanobot serve-mcp` on the same store reach B's event clients too.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pg from "pg";
import WebSocket from "ws";
import { afterEach, beforeEach, expect, it } from "vitest";
import { relayApplicationName } from "../../src/session/pg-event-relay.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { NANOBOT_BIN, runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();
const WS_TOKEN = "ws-cluster-token-0001";

interface Worker {
  name: string;
  fake: FakeLLM;
  proc: RunningNanobot;
  url: string;
}

let root: string;
let schema: string;
let env: Record<string, string>;
let workers: Worker[] = [];
const closers: Array<() => void> = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cluster-events-"));
  await mkdir(join(root, "ws"));
  schema = uniqueSchema("events");
  env = { HOME: root, NANOBOT_HOME: join(root, "home"), NANOBOT_STORE_URL: `${TEST_PG_URL}?schema=${schema}` };
});
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  for (const w of workers) {
    await w.proc.stop();
    await w.fake.close();
  }
  workers = [];
  await dropSchemas([schema]);
  await rm(root, { recursive: true, force: true });
});

/** `<name>.json` for a process on the shared home and store, with a fake LLM of its own (the workers close theirs). */
async function writeConfig(name: string, fake: FakeLLM, extra: Record<string, unknown> = {}): Promise<string> {
  const config = join(root, `${name}.json`);
  await writeFile(
    config,
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-cluster-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws"), dream: { enabled: false } } },
      ...extra,
    }),
  );
  return config;
}

/** A gateway worker with the WebSocket channel on its own port, on the shared home and store. */
async function startWorker(name: string): Promise<Worker> {
  const fake = await startFakeLLM();
  const config = await writeConfig(name, fake, { gateway: { heartbeat: { enabled: false } }, channels: { websocket: { enabled: true, token: WS_TOKEN } } });
  const proc = startNanobot(["gateway", "--port", "0"], { cwd: root, env: { ...env, NANOBOT_CONFIG: config } });
  const worker: Worker = { name, fake, proc, url: "" };
  workers.push(worker);
  worker.url = (await proc.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!;
  return worker;
}

/** A config for a process that runs turns on the shared store without serving it, with a fake of its own. */
async function standaloneConfig(name: string): Promise<{ fake: FakeLLM; config: string }> {
  const fake = await startFakeLLM();
  closers.push(() => void fake.close());
  return { fake, config: await writeConfig(name, fake) };
}

async function ask(worker: Worker, content: string, session: string): Promise<string> {
  const res = await fetch(`${worker.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content }], session_id: session }),
  });
  const body = (await res.json()) as { choices?: Array<{ message: { content: string } }> };
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body.choices![0]!.message.content;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; stderr:\n${workers.map((w) => `[${w.name}] ${w.proc.stderr()}`).join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Follows `GET /api/events` on `worker`; the array fills as events arrive. */
async function follow(worker: Worker, query = ""): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const abort = new AbortController();
  closers.push(() => abort.abort());
  const res = await fetch(`${worker.url}/api/events${query}`, { signal: abort.signal });
  expect(res.status).toBe(200);
  void (async () => {
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
        if (event && data) events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
      }
    }
  })().catch(() => undefined);
  await until(() => events.some((e) => e.event === "ready"), "the event stream to open");
  return events;
}

async function relayPids(): Promise<number[]> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid", [relayApplicationName(schema)]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/** A WebSocket-channel client: every frame it got, parsed. */
async function connect(worker: Worker, clientId?: string): Promise<{ socket: WebSocket; frames: Array<Record<string, unknown>>; credential: string }> {
  const url = `${worker.url.replace(/^http/, "ws")}/ws?token=${WS_TOKEN}${clientId ? `&clientId=${encodeURIComponent(clientId)}` : ""}`;
  const socket = new WebSocket(url);
  closers.push(() => socket.close());
  const frames: Array<Record<string, unknown>> = [];
  socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString()) as Record<string, unknown>));
  await until(() => frames.some((f) => f.type === "ready"), `the socket on ${worker.name} to be ready`, 20_000);
  return { socket, frames, credential: String(frames.find((f) => f.type === "ready")!.clientId) };
}

postgres.describe("events across gateway workers on one PostgreSQL", () => {
  it("an /api/events client on B sees the turns run on A, and its own worker's", { timeout: 240_000 }, async () => {
    const [a, b] = [await startWorker("a"), await startWorker("b")];
    const atB = await follow(b);
    const onlyShared = await follow(b, "?session=api%3Ashared");
    const bWorker = atB.find((e) => e.event === "ready")!.data.worker;
    expect(typeof bWorker).toBe("string");
    a.fake.enqueue({ text: "from a" });
    b.fake.enqueue({ text: "from b" });
    expect(await ask(a, "hello a", "shared")).toBe("from a");
    expect(await ask(b, "hello b", "local")).toBe("from b");
    await until(() => atB.filter((e) => e.event === "turn_completed").length === 2, "both turns on B's stream");
    const [remote, local] = atB.filter((e) => e.event === "turn_completed").map((e) => e.data);
    expect(remote).toMatchObject({ sessionKey: "api:shared", stopReason: "completed", channel: "api" });
    expect(typeof remote!.worker).toBe("string");
    expect(remote!.worker).not.toBe(bWorker);
    // A turn of B itself is not relayed back to it: it comes once, without a worker.
    expect(local).toMatchObject({ sessionKey: "api:local" });
    expect(local!.worker).toBeUndefined();
    expect(onlyShared.filter((e) => e.event === "turn_completed").map((e) => e.data.sessionKey)).toEqual(["api:shared"]);
  });

  it("a WebSocket client that moved from A to B mid-turn gets A's reply on B", { timeout: 240_000 }, async () => {
    const [a, b] = [await startWorker("a"), await startWorker("b")];
    a.fake.enqueue({ text: "the answer from A", delayMs: 2_000 });
    const first = await connect(a);
    first.socket.send(JSON.stringify({ type: "message", content: "question" }));
    await until(() => a.fake.requests.length === 1, "A's model call");
    first.socket.close();
    // Reconnects (as after a dropped connection) through the load balancer, which picks B.
    const moved = await connect(b, first.credential);
    await until(() => moved.frames.some((f) => f.type === "stream_end" || f.type === "message"), "the reply on B");
    const reply = moved.frames.find((f) => f.type === "stream_end" || f.type === "message")!;
    expect(reply).toMatchObject({ chatId: "default", content: "the answer from A" });
    expect(b.fake.requests).toHaveLength(0);

    // A client on B is served by B; the reply stays there.
    b.fake.enqueue({ text: "B answers" });
    moved.socket.send(JSON.stringify({ type: "message", content: "again" }));
    await until(() => moved.frames.some((f) => (f.type === "stream_end" || f.type === "message") && f.content === "B answers"), "B's own reply");
  });

  it("a cron job on the leader writes to a WebSocket client whose socket is on a follower", { timeout: 240_000 }, async () => {
    const [a, b] = [await startWorker("a"), await startWorker("b")];
    // A started first and leads: cron runs there. The client is on B.
    a.fake.enqueue(...Array.from({ length: 50 }, () => ({ text: "scheduled hello" })));
    const client = await connect(b);
    const publicId = client.credential.split(".")[0]!;
    const added = await runNanobot(["cron", "add", "-n", "greet", "-m", "say hello", "--every", "1", "--channel", "websocket", "--chat", `${publicId}:default`], {
      cwd: root,
      env: { ...env, NANOBOT_CONFIG: join(root, "a.json") },
    });
    expect(added.code).toBe(0);
    await until(() => client.frames.some((f) => (f.type === "message" || f.type === "stream_end") && f.content === "scheduled hello"), "the job's reply on B's socket");
    expect(b.fake.requests).toHaveLength(0);
  });

  it("the relay survives its connections being killed and delivers later events", { timeout: 240_000 }, async () => {
    const [a, b] = [await startWorker("a"), await startWorker("b")];
    const atB = await follow(b);
    const before = await relayPids();
    expect(before).toHaveLength(2);
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    await client.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [before]);
    await client.end();
    await until(async () => {
      const now = await relayPids();
      return now.length === 2 && now.every((pid) => !before.includes(pid));
    }, "both relays to reconnect");
    await until(() => atB.some((e) => e.event === "resync"), "B to tell its event client about the cut");
    a.fake.enqueue({ text: "after the cut" });
    expect(await ask(a, "still there?", "after")).toBe("after the cut");
    await until(() => atB.some((e) => e.event === "turn_completed" && e.data.sessionKey === "api:after"), "the turn after the reconnect on B");
  });

  it("a turn run by `nanobot agent` on the same store shows on a gateway's /api/events", { timeout: 240_000 }, async () => {
    const b = await startWorker("b");
    const atB = await follow(b);
    const { fake: cliFake, config } = await standaloneConfig("cli");
    cliFake.enqueue({ text: "from the cli" });
    const run = await runNanobot(["agent", "-m", "hello from a terminal", "--session", "cli:desk"], { cwd: root, env: { ...env, NANOBOT_CONFIG: config }, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("from the cli");
    await until(() => atB.some((e) => e.event === "turn_completed" && e.data.sessionKey === "cli:desk"), "the CLI's turn on B's stream");
    const event = atB.find((e) => e.event === "turn_completed" && e.data.sessionKey === "cli:desk")!.data;
    expect(event).toMatchObject({ stopReason: "completed", channel: "cli" });
    expect(typeof event.worker).toBe("string");
  });

  it("a turn served by `nanobot serve-mcp` on the same store shows on a gateway's /api/events", { timeout: 240_000 }, async () => {
    const b = await startWorker("b");
    const atB = await follow(b);
    const { fake: mcpFake, config } = await standaloneConfig("mcp");
    mcpFake.enqueue({ text: "from an MCP client" });
    const client = new Client({ name: "cluster-events-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [NANOBOT_BIN, "serve-mcp"], cwd: root, env: { PATH: process.env.PATH ?? "", ...env, NANOBOT_CONFIG: config, NO_COLOR: "1" } }));
    try {
      const { tools } = await client.listTools();
      const chat = tools.find((t) => t.name.startsWith("chat-with-"))!;
      const result = await client.callTool({ name: chat.name, arguments: { prompt: "hello over MCP" } });
      expect(JSON.stringify(result.content)).toContain("from an MCP client");
      await until(() => atB.some((e) => e.event === "turn_completed" && e.data.sessionKey === "mcp:stdio"), "the MCP turn on B's stream");
    } finally {
      await client.close();
    }
    expect(atB.find((e) => e.event === "turn_completed" && e.data.sessionKey === "mcp:stdio")!.data).toMatchObject({ stopReason: "completed" });
  });
});
