/**
 * Tracing outside the gateway: `nanobot agent -m` and `nanobot serve-mcp` (the built CLI, in its
 * own process) export a turn's spans over OTLP/HTTP when the OTEL_* variables say so, under the
 * caller's `TRACEPARENT`, and export nothing without them.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { NANOBOT_BIN, runNanobot } from "../support/nanobot-cli.js";
import { spanAttributes, startCollector } from "../support/otlp-collector.js";
import type { OtlpCollector, OtlpSpan } from "../support/otlp-collector.js";

let root: string;
let fake: FakeLLM;
let collector: OtlpCollector;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cmd-tracing-"));
  const workspace = join(root, "ws");
  await mkdir(workspace);
  await writeFile(join(workspace, "notes.txt"), "tulips: 12\n");
  fake = await startFakeLLM();
  collector = await startCollector();
  await writeFile(
    join(root, "config.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-cmd-tracing-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
    }),
  );
  env = { HOME: root, NANOBOT_HOME: join(root, "home"), NANOBOT_CONFIG: join(root, "config.json") };
});
afterEach(async () => {
  await fake.close();
  await collector.close();
  await rm(root, { recursive: true, force: true });
});

function scriptToolTurn(): void {
  fake.enqueue(
    { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "notes.txt" } }], usage: { promptTokens: 30, completionTokens: 5 } },
    { text: "You have 12 tulips.", usage: { promptTokens: 50, completionTokens: 6 } },
  );
}

const otel = (): Record<string, string> => ({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: "nanobot-cli-test" });
const named = (spans: OtlpSpan[], prefix: string): OtlpSpan[] => spans.filter((s) => s.name.startsWith(prefix));

describe("nanobot agent -m with OTEL_* set", () => {
  it("exports the turn, its model calls and its tool call under the caller's TRACEPARENT", async () => {
    scriptToolTurn();
    const caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const r = await runNanobot(["agent", "-m", "how many tulips?", "--no-stream"], { cwd: root, env: { ...env, ...otel(), TRACEPARENT: caller } });
    expect(r.stderr).toBe("");
    expect(r).toMatchObject({ code: 0, stdout: "You have 12 tulips.\n" });
    // The process flushed its spans before exiting.
    const spans = collector.spans();
    const [turn] = named(spans, "invoke_agent");
    expect(turn).toBeDefined();
    expect(turn!.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(turn!.parentSpanId).toBe("b7ad6b7169203331");
    expect(spanAttributes(turn!)).toMatchObject({ "gen_ai.conversation.id": "cli:direct", "nanobot.channel": "cli" });
    const chats = named(spans, "chat ");
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat.traceId).toBe(turn!.traceId);
    expect(spanAttributes(chats[0]!)).toMatchObject({ "gen_ai.request.model": "test-model", "gen_ai.usage.input_tokens": 30 });
    const [tool] = named(spans, "execute_tool");
    expect(spanAttributes(tool!)).toMatchObject({ "gen_ai.tool.name": "read_file", "gen_ai.tool.call.id": "call_1" });
    expect(tool!.parentSpanId).toBe(turn!.spanId);
    const resource = collector.exports[0]!.body.resourceSpans[0]!.resource.attributes;
    expect(resource).toContainEqual({ key: "service.name", value: { stringValue: "nanobot-cli-test" } });
  }, 30_000);

  it("says so when TRACEPARENT is malformed, and starts its own trace", async () => {
    fake.enqueue({ text: "hi" });
    const r = await runNanobot(["agent", "-m", "hi", "--no-stream"], { cwd: root, env: { ...env, ...otel(), TRACEPARENT: "not-a-trace" } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/TRACEPARENT "not-a-trace" is not a W3C traceparent/);
    const [turn] = named(collector.spans(), "invoke_agent");
    expect(turn!.parentSpanId ?? "").toBe("");
  }, 30_000);

  it("exports nothing without OTEL_* variables", async () => {
    scriptToolTurn();
    const r = await runNanobot(["agent", "-m", "how many tulips?", "--no-stream"], { cwd: root, env: { ...env, TRACEPARENT: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } });
    expect(r).toMatchObject({ code: 0, stdout: "You have 12 tulips.\n" });
    expect(collector.exports).toEqual([]);
  }, 30_000);
});

describe("nanobot serve-mcp with OTEL_* set", () => {
  it("exports a chat-with-<agent> call's turn when the server shuts down", async () => {
    scriptToolTurn();
    const transport = new StdioClientTransport({ command: process.execPath, args: [NANOBOT_BIN, "serve-mcp"], cwd: root, env: { PATH: process.env["PATH"] ?? "", NO_COLOR: "1", ...env, ...otel() } });
    const client = new Client({ name: "tracing-test", version: "1.0.0" });
    await client.connect(transport);
    const result = await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: "how many tulips?" } });
    expect(JSON.stringify(result.content)).toContain("You have 12 tulips.");
    await client.close();
    // Closing stdin ends the server, which flushes on its way out.
    await expect.poll(() => named(collector.spans(), "invoke_agent").length, { timeout: 10_000 }).toBe(1);
    const spans = collector.spans();
    const turn = named(spans, "invoke_agent")[0]!;
    expect(spanAttributes(turn)["nanobot.channel"]).toBe("mcp");
    expect(named(spans, "chat ").every((s) => s.traceId === turn.traceId)).toBe(true);
    expect(named(spans, "execute_tool")[0]!.parentSpanId).toBe(turn.spanId);
  }, 30_000);
});
