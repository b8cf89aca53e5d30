/**
 * A test profile of nanobot's MCP server for the conformance suite: the real chat profile
 * (chat-with-nanobot, chat://history, chat://progress; turns answered by an offline echo
 * processor) plus the fixture tools, resources and prompts the suite expects, served by the
 * real HTTP handler (Host/Origin checks included) on a free loopback port.
 */
import type { TurnProcessor } from "../../src/agent/turn-processor.js";
import { resolveConfig } from "../../src/config/index.js";
import { chatProfile } from "../../src/gateway/mcp/chat-profile.js";
import { ProgressBoard } from "../../src/gateway/mcp/chat-progress.js";
import { createProfileHttpHandler } from "../../src/gateway/mcp/http-handler.js";
import type { McpHttpHandler } from "../../src/gateway/mcp/http-handler.js";
import type { ServedPrompt, ServedResource, ServedResourceTemplate, ServerProfile } from "../../src/gateway/mcp/server-profile.js";
import { listen } from "../mcp-server/helpers.js";
import { fixtureTools, PNG_BASE64 } from "./fixture-tools.js";

/** Answers every turn with the prompt it got, so the chat tool works without any LLM. */
const echoProcessor: TurnProcessor = {
  process: (request) =>
    Promise.resolve({
      content: `echo: ${typeof request.content === "string" ? request.content : "[parts]"}`,
      sessionKey: request.sessionKey,
      stopReason: "completed",
      toolsUsed: [],
      usage: { promptTokens: 0, completionTokens: 0 },
    }),
};

function staticResource(uri: string, name: string, description: string, mimeType: string, body: { text: string } | { blob: string }): ServedResource {
  return {
    definition: { uri, name, description, mimeType },
    read: () => Promise.resolve({ contents: [{ uri, mimeType, ...body }] }),
  };
}

const resources: ServedResource[] = [
  staticResource("test://static-text", "static-text", "A static text resource.", "text/plain", { text: "This is the content of the static text resource." }),
  staticResource("test://static-binary", "static-binary", "A static PNG image.", "image/png", { blob: PNG_BASE64 }),
  staticResource("test://watched-resource", "watched-resource", "A resource clients may subscribe to.", "text/plain", { text: "Watched resource content." }),
];

const templates: ServedResourceTemplate[] = [
  {
    definition: { uriTemplate: "test://template/{id}/data", name: "template-data", description: "Data for an id.", mimeType: "application/json" },
    match: (uri) => {
      const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
      return m?.[1] ? { id: decodeURIComponent(m[1]) } : undefined;
    },
    read: (uri, vars) =>
      Promise.resolve({
        contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ id: vars.id, templateTest: true, data: `Data for ID: ${vars.id}` }) }],
      }),
  },
];

const prompts: ServedPrompt[] = [
  {
    definition: { name: "test_simple_prompt", description: "A prompt without arguments." },
    get: () => Promise.resolve({ messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }] }),
  },
  {
    definition: {
      name: "test_prompt_with_arguments",
      description: "A prompt with two arguments.",
      arguments: [
        { name: "arg1", description: "First test argument", required: true },
        { name: "arg2", description: "Second test argument", required: true },
      ],
    },
    get: (args) =>
      Promise.resolve({
        messages: [{ role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }],
      }),
    complete: (_argument, value) => ["paris", "park", "party"].filter((v) => v.startsWith(value)),
  },
  {
    definition: {
      name: "test_prompt_with_embedded_resource",
      description: "A prompt that embeds a resource.",
      arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    },
    get: (args) =>
      Promise.resolve({
        messages: [
          {
            role: "user",
            content: { type: "resource", resource: { uri: args.resourceUri ?? "", mimeType: "text/plain", text: "Embedded resource content for testing." } },
          },
          { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
        ],
      }),
  },
  {
    definition: { name: "test_prompt_with_image", description: "A prompt with an image." },
    get: () =>
      Promise.resolve({
        messages: [
          { role: "user", content: { type: "image", data: PNG_BASE64, mimeType: "image/png" } },
          { role: "user", content: { type: "text", text: "Please analyze the image above." } },
        ],
      }),
  },
];

/** The chat profile with the conformance fixtures added. */
export function conformanceProfile(): ServerProfile {
  const chat = chatProfile({ processor: echoProcessor, config: resolveConfig({}, { env: {}, envProviders: false }).config, version: "0.0.0-conformance" }, new ProgressBoard());
  return {
    ...chat,
    tools: [...chat.tools, ...fixtureTools()],
    resources: [...(chat.resources ?? []), ...resources],
    resourceTemplates: templates,
    prompts,
    logging: true,
    subscriptions: true,
  };
}

export interface ProfileServer {
  url: string;
  handler: McpHttpHandler;
  close(): Promise<void>;
}

export async function startProfileServer(): Promise<ProfileServer> {
  const profile = conformanceProfile();
  const handler = createProfileHttpHandler(() => profile);
  const http = await listen(handler);
  return {
    url: http.url,
    handler,
    async close() {
      await handler.close();
      await http.close();
    },
  };
}
