/**
 * The tools the MCP conformance suite (`@modelcontextprotocol/conformance@0.1.13`) calls by
 * name, written against our `ServedTool` seam. Names and payloads follow the suite's scenario
 * descriptions (`conformance list --server`).
 */
import { CreateMessageResultSchema, ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { HandlerExtra, ServedTool } from "../../src/gateway/mcp/server-profile.js";

/** A 1×1 red PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** A tiny mono 8 kHz 16-bit WAV with four silent samples. */
export function wavBase64(): string {
  const samples = 4;
  const data = samples * 2;
  const b = Buffer.alloc(44 + data);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + data, 4);
  b.write("WAVEfmt ", 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(16000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write("data", 36);
  b.writeUInt32LE(data, 40);
  return b.toString("base64");
}

const NO_ARGS = { type: "object" as const, properties: {} };
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function fixed(name: string, description: string, result: CallToolResult): ServedTool {
  return { definition: { name, description, inputSchema: NO_ARGS }, call: () => Promise.resolve(result) };
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

async function log(extra: HandlerExtra, data: string): Promise<void> {
  const notification: ServerNotification = { method: "notifications/message", params: { level: "info", logger: "conformance", data } };
  await extra.sendNotification(notification);
}

async function elicit(extra: HandlerExtra, message: string, requestedSchema: Record<string, unknown>): Promise<string> {
  const result = await extra.sendRequest(
    { method: "elicitation/create", params: { message, requestedSchema: requestedSchema as never } },
    ElicitResultSchema,
  );
  return `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

export function fixtureTools(): ServedTool[] {
  return [
    fixed("test_simple_text", "Returns simple text.", text("This is a simple text response for testing.")),
    fixed("test_image_content", "Returns a PNG image.", { content: [{ type: "image", data: PNG_BASE64, mimeType: "image/png" }] }),
    fixed("test_audio_content", "Returns a WAV clip.", { content: [{ type: "audio", data: wavBase64(), mimeType: "audio/wav" }] }),
    fixed("test_embedded_resource", "Returns an embedded resource.", {
      content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }],
    }),
    fixed("test_multiple_content_types", "Returns text, an image and a resource.", {
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: PNG_BASE64, mimeType: "image/png" },
        { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"test":"data","value":123}' } },
      ],
    }),
    {
      definition: { name: "test_error_handling", description: "Always fails.", inputSchema: NO_ARGS },
      call: () => Promise.reject(new Error("This tool intentionally returns an error for testing")),
    },
    {
      definition: { name: "test_tool_with_logging", description: "Logs three messages while it runs.", inputSchema: NO_ARGS },
      async call(_args, { extra }) {
        await log(extra, "Tool execution started");
        await sleep(50);
        await log(extra, "Tool processing data");
        await sleep(50);
        await log(extra, "Tool execution completed");
        return text("Tool with logging executed successfully");
      },
    },
    {
      definition: { name: "test_tool_with_progress", description: "Reports progress 0, 50, 100 of 100.", inputSchema: NO_ARGS },
      async call(_args, { extra }) {
        const token = extra._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (token !== undefined) {
            await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
          }
          if (progress < 100) await sleep(50);
        }
        return text("Tool with progress executed successfully");
      },
    },
    {
      definition: {
        name: "test_sampling",
        description: "Asks the client's LLM.",
        inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
      },
      async call(args, { extra }) {
        const result = await extra.sendRequest(
          {
            method: "sampling/createMessage",
            params: { messages: [{ role: "user", content: { type: "text", text: String(args.prompt) } }], maxTokens: 100 },
          },
          CreateMessageResultSchema,
        );
        const reply = result.content.type === "text" ? result.content.text : `[${result.content.type}]`;
        return text(`LLM response: ${reply}`);
      },
    },
    {
      definition: {
        name: "test_elicitation",
        description: "Asks the user for a name and an email.",
        inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
      },
      async call(args, { extra }) {
        const answer = await elicit(extra, String(args.message), {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        });
        return text(`User response: ${answer}`);
      },
    },
    {
      definition: { name: "test_elicitation_sep1034_defaults", description: "Elicits with defaults for every primitive.", inputSchema: NO_ARGS },
      async call(_args, { extra }) {
        const answer = await elicit(extra, "Please review your details", {
          type: "object",
          properties: {
            name: { type: "string", default: "John Doe" },
            age: { type: "integer", default: 30 },
            score: { type: "number", default: 95.5 },
            status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
            verified: { type: "boolean", default: true },
          },
        });
        return text(`Elicitation completed: ${answer}`);
      },
    },
    {
      definition: { name: "test_elicitation_sep1330_enums", description: "Elicits with every enum form.", inputSchema: NO_ARGS },
      async call(_args, { extra }) {
        const answer = await elicit(extra, "Pick some options", {
          type: "object",
          properties: {
            untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
            titledSingle: {
              type: "string",
              oneOf: [
                { const: "value1", title: "First Option" },
                { const: "value2", title: "Second Option" },
                { const: "value3", title: "Third Option" },
              ],
            },
            legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
            untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
            titledMulti: {
              type: "array",
              items: {
                anyOf: [
                  { const: "value1", title: "First Choice" },
                  { const: "value2", title: "Second Choice" },
                  { const: "value3", title: "Third Choice" },
                ],
              },
            },
          },
        });
        return text(`Elicitation completed: ${answer}`);
      },
    },
    {
      // SEP-1699: the reply's SSE stream is closed mid-call; the client resumes with
      // Last-Event-ID and the reply comes from the session's event store. A log message first
      // gives clients that get no priming event (protocol < 2025-11-25) an event id to resume from.
      definition: { name: "test_reconnection", description: "Closes its SSE stream mid-call, then answers.", inputSchema: NO_ARGS },
      async call(_args, { extra, closeStream }) {
        await log(extra, "closing this stream; reconnect with Last-Event-ID");
        closeStream?.();
        await sleep(200);
        return text("Reconnection test completed");
      },
    },
    {
      // The 2020-12 keywords must reach the client untouched.
      definition: {
        name: "json_schema_2020_12_tool",
        description: "Tool with JSON Schema 2020-12 features",
        inputSchema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
          properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
          additionalProperties: false,
        },
      },
      call: () => Promise.resolve(text("ok")),
    },
  ];
}
