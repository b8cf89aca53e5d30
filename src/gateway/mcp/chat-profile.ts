/**
 * The profile nanobot serves over MCP: one `chat-with-<agent>` tool per published agent, each
 * call a turn through the TurnProcessor in the session bound to the MCP session, plus the
 * `chat://history` and `chat://progress` resources of that session.
 */
import { CHAT_INPUT_SCHEMA, chatInputContent, NO_CONTENT, parseChatInput } from "../../agent/subagent-tools.js";
import type { TurnProcessor } from "../../agent/turn-processor.js";
import type { NanobotConfig } from "../../config/index.js";
import { errorMessage } from "../../core/errors.js";
import type { AgentEvent } from "../../core/events.js";
import { textOf } from "../../core/message-helpers.js";
import type { Message, UIPart } from "../../core/messages.js";
import type { CallToolResult, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { applyEvent, progressMessage, progressText } from "./chat-progress.js";
import type { ProgressBoard } from "./chat-progress.js";
import { DEFAULT_AGENT, publishedAgents } from "./published-agents.js";
import type { PublishedAgent } from "./published-agents.js";
import type { CallScope, InitializeOverride, ServedPrompt, ServedResource, ServedTool, ServerProfile } from "./server-profile.js";
import { expandContextFor, resolveDynamicText } from "../../agent/agent-instructions.js";
import type { InstructionSource } from "../../agent/agent-instructions.js";
import type { AgentInstructions } from "../../config/schema-agents.js";
import { renderInlinePrompt } from "../../mcp/instructions.js";
import { publishedExtras, publishesServerItems, watchPublished } from "./published-mcp.js";
import { starterPrompts } from "./starter-prompts.js";

export type McpLogFn = (level: "debug" | "info" | "warn" | "error", msg: string, data?: Record<string, unknown>) => void;

/** What the MCP server needs from the rest of nanobot. */
export interface McpServerDeps {
  /** Runs each turn (the AgentLoop in the gateway, `DirectTurnProcessor` in scripts and tests). */
  processor: TurnProcessor;
  /** Decides which agents are published (`publish`, `agents`). */
  config: NanobotConfig;
  /** A session's messages for `chat://history` (the session store's `loadMessages`). */
  loadMessages?: (sessionKey: string) => Promise<Message[]>;
  /** Server name and version announced in `initialize` when `publish.name/version` are unset. */
  serverName?: string;
  version?: string;
  log?: McpLogFn;
  /**
   * The runtime's MCP servers and environment: what `publish.introduction` expands in and what
   * `publish.tools/prompts/resources/mcpServers` re-export. Without it those are not served.
   */
  source?: InstructionSource;
}

export const HISTORY_URI = "chat://history";
export const PROGRESS_URI = "chat://progress";
/** Pause between the last progress notification and the reply (see `runChat`). */
const PROGRESS_SETTLE_MS = 15;

/** Builds the chat profile; `board` is shared by every connection of one server. */
export function chatProfile(deps: McpServerDeps, board: ProgressBoard): ServerProfile {
  const agents = publishedAgents(deps.config);
  const { publish } = deps.config;
  const source = deps.source;
  const intro = publish.introduction as AgentInstructions | undefined;
  const proxied = singleServerProxy(deps.config);
  return {
    // A Go config names and versions what it publishes; nanobot's own name is the fallback.
    name: publish.name ?? deps.serverName ?? "nanobot",
    version: publish.version ?? deps.version ?? "0.0.0",
    instructions:
      publish.instructions ??
      (agents.length > 0
        ? `Tools: ${agents.map((a) => a.toolName).join(", ")}. Each call is one message to that agent; the conversation continues across calls in this session.`
        : undefined),
    tools: agents.map((agent) => chatTool(agent, deps, board)),
    resources: chatResources(deps, board),
    // Declared even when empty: a client may list them, and a config reload can add some.
    prompts: [...inlinePrompts(deps), ...starterPrompts(deps.config, agents)],
    // Turn progress goes out as log messages; chat://history and chat://progress can be watched.
    logging: true,
    subscriptions: true,
    completions: true,
    ...(source && (intro !== undefined || proxied) ? { initialize: () => initializeOverride(source, intro, proxied) } : {}),
    ...(source && publishesServerItems(deps.config)
      ? { extras: async () => publishedExtras(deps.config, await source.mcp()), watch: (onUpdated: (uri: string) => void) => watchPublished(source, onUpdated) }
      : {}),
  };
}

/**
 * Go's single-server proxy: `publish.mcpServers` names one server and nothing else is published
 * (no agents, tools, prompts, resources or instructions), so nanobot answers as that server.
 */
function singleServerProxy(config: NanobotConfig): string | undefined {
  const p = config.publish;
  const only = p.mcpServers?.length === 1 ? p.mcpServers[0] : undefined;
  const nothingElse = [p.entrypoint, p.tools, p.prompts, p.resources, p.resourceTemplates].every((l) => (l?.length ?? 0) === 0);
  return only && nothingElse && !p.instructions && Object.keys(config.agents.named).length === 0 ? only : undefined;
}

async function initializeOverride(source: InstructionSource, intro: AgentInstructions | undefined, proxied: string | undefined): Promise<InitializeOverride> {
  const out: InitializeOverride = {};
  if (intro !== undefined) out.intro = await resolveDynamicText(source, intro, "publish.introduction");
  if (proxied) {
    const listing = (await source.mcp()).connection(proxied)?.listing;
    if (listing?.serverInfo) out.serverInfo = listing.serverInfo;
    if (listing?.instructions !== undefined) out.instructions = listing.instructions;
  }
  return out;
}

/** `publish.prompts` entries that name a top-level `prompts.<name>` template (Go inline prompts). */
function inlinePrompts(deps: McpServerDeps): ServedPrompt[] {
  const templates = deps.config.prompts;
  const source = deps.source;
  const out: ServedPrompt[] = [];
  for (const name of deps.config.publish.prompts ?? []) {
    const prompt = templates[name];
    if (!prompt || name.includes("/")) continue;
    const input = Object.entries(prompt.input ?? {});
    out.push({
      definition: {
        name,
        ...(prompt.description ? { description: prompt.description } : {}),
        arguments: input.map(([arg, field]) => ({
          name: arg,
          ...(typeof field === "string" ? { description: field } : typeof (field as { description?: unknown }).description === "string" ? { description: (field as { description: string }).description } : {}),
          required: (field as { required?: unknown }).required !== false,
        })),
      },
      complete: (argument, value) => {
        const field = (prompt.input ?? {})[argument] as { enum?: unknown; default?: unknown } | string | undefined;
        const known = typeof field === "object" && field !== null ? [...(Array.isArray(field.enum) ? field.enum : []), field.default] : [];
        return [...new Set(known.filter((v): v is string => typeof v === "string" && v.startsWith(value)))];
      },
      async get(args) {
        const filled = Object.fromEntries(input.map(([arg]) => [arg, args[arg] ?? ""]));
        const ctx = source ? await expandContextFor(source, `prompts.${name}`, prompt.template) : { env: {}, where: `prompts.${name}` };
        const text = renderInlinePrompt(name, prompt, { ...filled, ...args }, ctx);
        return { messages: [{ role: "user", content: { type: "text", text } }] };
      },
    });
  }
  return out;
}

function chatTool(published: PublishedAgent, deps: McpServerDeps, board: ProgressBoard): ServedTool {
  return {
    definition: {
      name: published.toolName,
      description: published.description,
      inputSchema: CHAT_INPUT_SCHEMA as { type: "object"; [key: string]: unknown },
      annotations: { title: `Chat with ${published.agent}`, readOnlyHint: false, openWorldHint: true },
    },
    call: (args, scope) => runChat(published, args, scope, deps, board),
  };
}

async function runChat(
  published: PublishedAgent,
  args: Record<string, unknown>,
  scope: CallScope,
  deps: McpServerDeps,
  board: ProgressBoard,
): Promise<CallToolResult> {
  const input = parseChatInput(args);
  const { sessionKey, extra } = scope;
  const entry = board.start(sessionKey, published.agent);
  const token = extra._meta?.progressToken;
  let step = 0;
  // Notifications go out in order; the reply waits for the last one so none trails it.
  let sent: Promise<void> = Promise.resolve();
  const queue = (send: () => Promise<void>): void => {
    sent = sent.then(send).catch((err: unknown) => {
      deps.log?.("debug", "MCP notification failed", { error: errorMessage(err) });
    });
  };
  let notified = 0;
  const notify = (message: string): void => {
    if (extra.signal.aborted) return;
    notified++;
    // Progress for a client that asked (a progress token), a log message for one that listens.
    if (token !== undefined) {
      const notification: ServerNotification = { method: "notifications/progress", params: { progressToken: token, progress: ++step, message } };
      queue(() => extra.sendNotification(notification));
    }
    queue(() => scope.log("info", { agent: published.agent, progress: message }));
    queue(() => scope.resourceUpdated(PROGRESS_URI));
  };
  // MCP-UI pages the turn's tools returned go back with the answer, as Go's chat tool returns them.
  const pages: UIPart[] = [];
  const onEvent = (event: AgentEvent): void => {
    if (event.type === "tool_result") pages.push(...event.result.content.filter((p): p is UIPart => p.type === "ui"));
    applyEvent(entry, event);
    const message = progressMessage(event);
    if (message) notify(message);
  };
  try {
    const reply = await deps.processor.process(
      {
        sessionKey,
        content: chatInputContent(input),
        ...(published.agent !== DEFAULT_AGENT ? { agent: published.agent } : {}),
        channel: "mcp",
        metadata: { mcpSessionId: extra.sessionId, mcpRequestId: extra.requestId },
      },
      { signal: extra.signal, onEvent },
    );
    entry.stopReason = reply.stopReason;
    if (reply.error !== undefined) entry.error = reply.error;
    queue(() => scope.resourceUpdated(HISTORY_URI));
    queue(() => scope.resourceUpdated(PROGRESS_URI));
    await sent;
    // SDK clients handle notifications a microtask late but responses at once: progress that
    // arrives in the same read as the reply is dropped. A short pause keeps them apart.
    if (notified > 0) await new Promise((resolve) => setTimeout(resolve, PROGRESS_SETTLE_MS));
    if (reply.error !== undefined) return { isError: true, content: [{ type: "text", text: reply.error }] };
    if (reply.stopReason === "aborted") return { isError: true, content: [{ type: "text", text: "The turn was stopped." }] };
    const resources = pages.map((p) => ({ type: "resource" as const, resource: { uri: p.uri, mimeType: p.mimeType, text: p.content } }));
    return { content: [{ type: "text", text: reply.content.trim() ? reply.content : NO_CONTENT }, ...resources] };
  } catch (err) {
    entry.error = errorMessage(err);
    entry.stopReason = "error";
    throw err;
  } finally {
    entry.running = false;
  }
}

function chatResources(deps: McpServerDeps, board: ProgressBoard): ServedResource[] {
  return [
    {
      definition: {
        uri: HISTORY_URI,
        name: "history",
        title: "Chat history",
        description: "The messages of this MCP session's conversation, oldest first: JSON, then a plain-text transcript.",
        mimeType: "application/json",
      },
      async read({ sessionKey }) {
        const messages = deps.loadMessages ? await deps.loadMessages(sessionKey) : [];
        return {
          contents: [
            { uri: HISTORY_URI, mimeType: "application/json", text: JSON.stringify({ sessionKey, messages }) },
            { uri: HISTORY_URI, mimeType: "text/plain", text: transcript(messages) },
          ],
        };
      },
    },
    {
      definition: {
        uri: PROGRESS_URI,
        name: "progress",
        title: "Turn progress",
        description: "What the agent is doing in this MCP session now (or did in its last turn): reply text so far and tools.",
        mimeType: "application/json",
      },
      read({ sessionKey }) {
        const entry = board.get(sessionKey);
        return Promise.resolve({
          contents: [
            { uri: PROGRESS_URI, mimeType: "application/json", text: JSON.stringify(entry ?? { sessionKey, running: false }) },
            { uri: PROGRESS_URI, mimeType: "text/plain", text: progressText(entry) },
          ],
        });
      },
    },
  ];
}

/** `role: text` lines; tool calls and results shown by name. */
function transcript(messages: readonly Message[]): string {
  const lines = messages.map((m) => {
    if (m.role === "tool") return `tool ${m.toolName}${m.isError ? " (error)" : ""}: ${textOf(m)}`;
    const calls = m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall").map((p) => p.name) : [];
    const text = textOf(m);
    return `${m.role}: ${text}${calls.length ? `${text ? " " : ""}[calls ${calls.join(", ")}]` : ""}`;
  });
  return lines.join("\n") || "(no messages yet)";
}
