/**
 * Category 4 (properties) — fast-check over the three places untrusted shapes enter:
 * governance (any message sequence → a legal request, checked on the core history and on what
 * the Chat and Anthropic translators produce), config loading (any document or file text → a
 * config or a ConfigError, nothing else), and tool argument validation (any schema and value →
 * a list of problems, never an exception).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, resolveConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/core/errors.js";
import type { AssistantContentPart, Message } from "../../src/core/messages.js";
import { governContext } from "../../src/engine/governance/govern.js";
import { sharedTokenEstimator } from "../../src/engine/tokens/estimator.js";
import { toAnthropicMessages } from "../../src/providers/anthropic-messages.js";
import { toChatMessages } from "../../src/providers/chat-messages.js";
import type { ModelTarget } from "../../src/providers/types.js";
import { validateArguments } from "../../src/tools/validate-args.js";
import type { JsonSchema } from "../../src/core/llm.js";
import { anthropicProblems, chatProblems, coreProblems } from "./legality.js";

const RUNS = Number(process.env.NANOBOT_PROPERTY_RUNS ?? 300);
const figures = { governance: 0, config: 0, configErrors: 0, validation: 0 };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "nanobot-props-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  console.log(
    `bad input (properties): ${figures.governance} histories governed legal, ${figures.config} config documents (${figures.configErrors} ConfigError, 0 other), ${figures.validation} argument checks`,
  );
});

// ---- governance -------------------------------------------------------------------------

const callId = fc.constantFrom("call_a", "call_b", "call_c", "call_d", "toolu_1");
const text = fc.oneof(fc.constant(""), fc.string({ maxLength: 40 }), fc.string({ minLength: 400, maxLength: 3_000 }));
let seq = 0;
const nextId = () => `m${++seq}`;

const systemMsg = text.map((t): Message => ({ id: nextId(), role: "system", content: [{ type: "text", text: t }] }));
const userMsg = text.map((t): Message => ({ id: nextId(), role: "user", content: [{ type: "text", text: t }] }));
const toolCall = fc.record({ id: callId, name: fc.constantFrom("read_file", "exec", "mcp_x_y"), broken: fc.boolean() });
const assistantMsg = fc
  .record({ text, calls: fc.array(toolCall, { maxLength: 3 }), reasoning: fc.option(fc.string({ maxLength: 20 })) })
  .map(({ text: t, calls, reasoning }): Message => {
    const content: AssistantContentPart[] = [];
    if (reasoning !== null) content.push({ type: "reasoning", text: reasoning, signature: "sig" });
    if (t) content.push({ type: "text", text: t });
    for (const c of calls) {
      content.push({
        type: "toolCall",
        id: c.id,
        name: c.name,
        arguments: c.broken ? {} : { path: "a.txt" },
        rawArguments: c.broken ? '{"path": ' : '{"path":"a.txt"}',
        ...(c.broken ? { parseError: "Unexpected end of JSON input" } : {}),
      });
    }
    return { id: nextId(), role: "assistant", content, provider: "custom", model: "test-model" };
  });
const toolMsg = fc
  .record({ id: callId, text, isError: fc.boolean(), empty: fc.boolean() })
  .map(({ id, text: t, isError, empty }): Message => ({
    id: nextId(),
    role: "tool",
    toolCallId: id,
    toolName: "read_file",
    content: empty ? [] : [{ type: "text", text: t }],
    isError,
  }));
const history = fc.array(fc.oneof({ arbitrary: userMsg, weight: 3 }, { arbitrary: assistantMsg, weight: 4 }, { arbitrary: toolMsg, weight: 4 }, { arbitrary: systemMsg, weight: 1 }), {
  maxLength: 30,
});

const chatTarget: ModelTarget = { provider: "custom", model: "test-model", api: "chat", baseURL: "http://127.0.0.1:9/v1" };
const anthropicTarget: ModelTarget = { provider: "anthropic", model: "claude-test", api: "anthropic", baseURL: "http://127.0.0.1:9" };

describe("governance: any history becomes a legal request", () => {
  it("core history, Chat Completions and Anthropic Messages are all legal", () => {
    const estimator = sharedTokenEstimator("custom/test-model");
    fc.assert(
      fc.property(history, fc.integer({ min: 50, max: 20_000 }), (messages, budget) => {
        const governed = governContext(messages, { estimator, budget, maxToolResultChars: 1_000 }).messages;
        expect(coreProblems(governed)).toEqual([]);
        expect(chatProblems(toChatMessages(governed, chatTarget))).toEqual([]);
        expect(anthropicProblems(toAnthropicMessages(governed, anthropicTarget).messages)).toEqual([]);
        figures.governance++;
      }),
      { numRuns: RUNS },
    );
  });

  it("never loses the last user message of a history that fits the budget", () => {
    const estimator = sharedTokenEstimator("custom/test-model");
    fc.assert(
      fc.property(history, fc.string({ minLength: 1, maxLength: 30 }), (messages, ask) => {
        const last: Message = { id: nextId(), role: "user", content: [{ type: "text", text: ask }] };
        const governed = governContext([...messages, last], { estimator, budget: 1_000_000, maxToolResultChars: 1_000 }).messages;
        expect(governed.some((m) => m.id === last.id)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("governance: the cases the properties found", () => {
  const call = (id: string): AssistantContentPart => ({ type: "toolCall", id, name: "read_file", arguments: {}, rawArguments: "{}" });
  it("a call id reused by a later assistant message (servers that number calls per answer) gets a unique id", () => {
    const history: Message[] = [
      { id: "u1", role: "user", content: [{ type: "text", text: "one" }] },
      { id: "a1", role: "assistant", content: [call("call_0")] },
      { id: "t1", role: "tool", toolCallId: "call_0", toolName: "read_file", content: [{ type: "text", text: "first" }], isError: false },
      { id: "a2", role: "assistant", content: [call("call_0")] },
      { id: "t2", role: "tool", toolCallId: "call_0", toolName: "read_file", content: [{ type: "text", text: "second" }], isError: false },
    ];
    const governed = governContext(history, { estimator: sharedTokenEstimator("custom/test-model"), budget: 100_000, maxToolResultChars: 1_000 }).messages;
    const ids = governed.flatMap((m) => (m.role === "tool" ? [`${m.toolCallId}:${(m.content[0] as { text: string }).text}`] : []));
    expect(ids).toEqual(["call_0:first", "call_0_2:second"]);
    expect(anthropicProblems(toAnthropicMessages(governed, anthropicTarget).messages)).toEqual([]);
    // The stored history itself is not touched.
    expect(history[3]).toMatchObject({ content: [{ id: "call_0" }] });
  });
});

// ---- config loading ---------------------------------------------------------------------

const anyValue = fc.jsonValue({ maxDepth: 3 });
const knownKeys = fc.record(
  {
    agents: fc.oneof(anyValue, fc.record({ defaults: fc.dictionary(fc.constantFrom("model", "workspace", "maxTokens", "temperature", "contextWindowTokens", "providerRetryMode"), anyValue) }, { requiredKeys: [] })),
    providers: fc.oneof(anyValue, fc.dictionary(fc.constantFrom("openai", "custom", "anthropic", "x"), fc.dictionary(fc.constantFrom("apiKey", "apiBase", "api"), anyValue))),
    gateway: fc.oneof(anyValue, fc.dictionary(fc.constantFrom("host", "port", "apiKey"), anyValue)),
    mcpServers: fc.oneof(anyValue, fc.dictionary(fc.string({ maxLength: 5 }), fc.dictionary(fc.constantFrom("command", "args", "url", "env", "toolTimeout", "type"), anyValue))),
    tools: anyValue,
    channels: anyValue,
    modelPresets: anyValue,
    llmProviders: anyValue,
  },
  { requiredKeys: [] },
);

function configOutcome(run: () => unknown): "config" | "ConfigError" {
  try {
    run();
    return "config";
  } catch (err) {
    if (err instanceof ConfigError) return "ConfigError";
    throw err;
  }
}

describe("config loading: a config or a ConfigError, never another exception", () => {
  const env = { HOME: "/nonexistent-home", NANOBOT_HOME: "/nonexistent-home/.nanobot" };

  it("random documents through resolveConfig", () => {
    fc.assert(
      fc.property(fc.oneof(knownKeys, fc.dictionary(fc.string({ maxLength: 8 }), anyValue)), (raw) => {
        const outcome = configOutcome(() => resolveConfig(raw as Record<string, unknown>, { env, cwd: "/", envProviders: false }));
        figures.config++;
        if (outcome === "ConfigError") figures.configErrors++;
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it("random file text (JSON, YAML, garbage) through loadConfig", async () => {
    const texts = fc.oneof(
      fc.string({ maxLength: 200 }),
      knownKeys.map((o) => JSON.stringify(o)),
      knownKeys.map((o) => JSON.stringify(o).slice(0, 40)),
      fc.constantFrom("agents:\n  defaults: [1, 2", "{{{", "- a\n- b", "null", "42", '"str"', "providers: !!binary x", "a: &x [*x]", "\u0000\u0001"),
    );
    await fc.assert(
      fc.asyncProperty(texts, fc.constantFrom("nanobot.json", "nanobot.yaml", "config.json"), async (content, name) => {
        const file = join(dir, name);
        await writeFile(file, content);
        let outcome: string;
        try {
          await loadConfig({ configPath: file, env, cwd: dir });
          outcome = "config";
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          outcome = "ConfigError";
        }
        figures.config++;
        if (outcome === "ConfigError") figures.configErrors++;
      }),
      { numRuns: RUNS },
    );
  });
});

// ---- tool argument validation -----------------------------------------------------------

const schemaArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  schema: fc.oneof(
    { depthSize: "small" },
    fc.record({ type: fc.constantFrom("string", "number", "integer", "boolean", "null", "object", "array", "bogus") }, { requiredKeys: [] }),
    fc.record(
      {
        type: fc.constant("object"),
        properties: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), tie("schema")), anyValue),
        required: fc.oneof(fc.array(fc.string({ maxLength: 4 })), anyValue),
        additionalProperties: fc.oneof(fc.boolean(), tie("schema")),
      },
      { requiredKeys: [] },
    ),
    fc.record({ type: fc.constant("array"), items: fc.oneof(tie("schema"), anyValue), minItems: fc.integer({ min: -2, max: 5 }) }, { requiredKeys: [] }),
    fc.record({ enum: fc.oneof(fc.array(anyValue), anyValue), minLength: anyValue, maximum: anyValue, pattern: fc.constantFrom("^a", "(", "[", "\\d+") }, { requiredKeys: [] }),
    fc.record({ anyOf: fc.array(tie("schema"), { maxLength: 3 }), oneOf: fc.array(tie("schema"), { maxLength: 3 }) }, { requiredKeys: [] }),
    anyValue,
  ),
})).schema;

describe("config loading: the cases the properties found", () => {
  it.each(["a: &x [*x]", "agents: &a\n  defaults: *a\n"])("a self-referencing YAML alias is a ConfigError: %j", async (text) => {
    const file = join(dir, "cyclic.yaml");
    await writeFile(file, text);
    await expect(loadConfig({ configPath: file, env: { HOME: "/nonexistent" }, cwd: dir })).rejects.toThrow(ConfigError);
  });
});

describe("tool argument validation", () => {
  it("any schema and any value: a list of strings, never an exception", () => {
    fc.assert(
      fc.property(schemaArb, anyValue, (schema, args) => {
        const problems = validateArguments(schema as JsonSchema, args);
        expect(Array.isArray(problems)).toBe(true);
        for (const p of problems) expect(typeof p).toBe("string");
        figures.validation++;
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it("boolean and junk schemas do not throw (a `false` schema refuses, others constrain nothing)", () => {
    expect(validateArguments({ type: "object", properties: { a: true as never } }, { a: 1 })).toEqual([]);
    expect(validateArguments(false as never, { a: 1 })).toHaveLength(1);
    expect(validateArguments("" as never, { a: 1 })).toEqual([]);
    expect(validateArguments({ type: "array", items: 7 as never }, [1, 2])).toEqual([]);
  });

  it("is exact on a simple schema: valid iff `path` is a string and `limit` an integer ≥ 1 when present", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { path: { type: "string" }, limit: { type: "integer", minimum: 1 } },
      required: ["path"],
    };
    fc.assert(
      fc.property(fc.record({ path: anyValue, limit: anyValue }, { requiredKeys: [] }), (args) => {
        const valid =
          typeof args.path === "string" && (!("limit" in args) || (typeof args.limit === "number" && Number.isInteger(args.limit) && args.limit >= 1));
        expect(validateArguments(schema, args).length === 0).toBe(valid);
        figures.validation++;
      }),
      { numRuns: RUNS },
    );
  });
});
