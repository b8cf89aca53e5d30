import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestHome, resultText } from "./helpers.js";
import type { TestHome } from "./helpers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const tsxLoader = createRequire(import.meta.url).resolve("tsx");
const entry = path.join(here, "cli-entry.ts");

let t: TestHome;
let client: Client | undefined;
let stderr = "";

beforeEach(async () => {
  t = await createTestHome("serve-mcp");
  stderr = "";
});
afterEach(async () => {
  await client?.close().catch(() => undefined);
  client = undefined;
  await t.cleanup();
});

async function connect(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", tsxLoader, entry, "serve-mcp"],
    cwd: t.root,
    env: { ...t.env, NO_COLOR: "1" },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const c = new Client({ name: "serve-mcp-test", version: "1.0.0" });
  await c.connect(transport);
  client = c;
  return c;
}

describe("nanobot serve-mcp (stdio, the real CLI)", () => {
  it("lists and calls chat-with-<agent>, streaming progress, in session mcp:stdio", async () => {
    await t.writeConfig({ agents: { helper: { instructions: "You are the helper." } } });
    // The fake holds the answer after its first delta until that delta has reached this client
    // as progress: an SDK client drops progress that arrives in the same read as the reply, so
    // without the hold a busy machine can see the whole answer and no progress.
    let firstProgress = (): void => undefined;
    const progressSeen = new Promise<void>((resolve) => (firstProgress = resolve));
    t.fake.enqueue({ text: "Hello over stdio", chunkSize: 5, hold: { afterChunks: 2, until: progressSeen } });
    const c = await connect();
    const { tools } = await c.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["chat-with-helper"]);

    const progress: Progress[] = [];
    const result = await c.callTool({ name: "chat-with-helper", arguments: { prompt: "say hello" } }, undefined, {
      onprogress: (p) => {
        progress.push(p);
        firstProgress();
      },
    });
    expect(resultText(result)).toBe("Hello over stdio");
    // The text streams as progress. The first delta ("Hello") arrived before the rest was sent;
    // later ones may share a read with the reply and be dropped, so what arrived is a prefix.
    const streamed = progress.map((p) => p.message).join("");
    expect(streamed.startsWith("Hello")).toBe(true);
    expect("Hello over stdio".startsWith(streamed)).toBe(true);
    const body = t.fake.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    // serve-mcp runs turns through the AgentLoop: the agent's instructions lead the system prompt.
    expect(body.messages[0]).toMatchObject({ role: "system", content: expect.stringMatching(/^You are the helper\./) });
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "say hello" });

    const history = await c.readResource({ uri: "chat://history" });
    const json = JSON.parse(String((history.contents[0] as { text: string }).text)) as { sessionKey: string; messages: unknown[] };
    expect(json.sessionKey).toBe("mcp:stdio");
    expect(json.messages).toHaveLength(2);
    t.fake.assertDone();
  }, 30_000);

  it("keeps stdout clean: a failing turn is a tool error, the protocol keeps working", async () => {
    t.fake.enqueue({ kind: "error", status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } } });
    const c = await connect();
    const result = await c.callTool({ name: "chat-with-nanobot", arguments: { prompt: "hi" } });
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain("Incorrect API key");
    // Still answering after the failure: nothing but JSON-RPC went to stdout.
    expect((await c.listTools()).tools.map((tool) => tool.name)).toEqual(["chat-with-nanobot"]);
    expect(stderr).not.toContain("Incorrect API key");
  }, 30_000);
});
