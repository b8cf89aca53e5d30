/**
 * Sub-agents as tools: an agent configured with `agents: [other]` gets a `chat-with-<other>`
 * tool that runs `other` (its own instructions, model and tools) on a prompt in a fresh session
 * and returns its final text. The same `{ prompt, attachments? }` input is what the MCP server
 * publishes for every agent, so the schema and its parsing live here, below both users.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { AgentConfig } from "../config/index.js";
import type { AgentEvent } from "../core/events.js";
import type { JsonSchema } from "../core/llm.js";
import type { UserContentPart } from "../core/messages.js";
import { fitToolName } from "../mcp/names.js";
import type { Tool, ToolOutput } from "../tools/tool.js";
import type { Runtime } from "./runtime.js";
import { DEFAULT_MAX_SUBAGENT_DEPTH, chainFor, enterSubagentSession, refuseSubagentCall } from "./subagent-chain.js";
import { DirectTurnProcessor } from "./turn-processor.js";
import type { TurnOptions, TurnReply, TurnRequest } from "./turn-processor.js";

/** What a sub-agent answers when its final reply is empty. */
export const NO_CONTENT = "[NO CONTENT]";

/** JSON Schema of a `chat-with-<agent>` call. */
export const CHAT_INPUT_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    prompt: { type: "string", description: "The message for the agent." },
    attachments: {
      type: "array",
      description: "Files or images for the agent to look at, by URL (http(s) or data:).",
      items: {
        type: "object",
        properties: {
          name: { type: "string" },
          url: { type: "string" },
          mimeType: { type: "string" },
        },
        required: ["url"],
      },
    },
  },
  required: ["prompt"],
};

const chatInput = z.object({
  prompt: z.string(),
  attachments: z
    .array(z.object({ name: z.string().optional(), url: z.string().min(1), mimeType: z.string().optional() }))
    .optional(),
});

export type ChatInput = z.output<typeof chatInput>;

/** Validates a `chat-with-*` call's arguments; throws an Error naming what is wrong. */
export function parseChatInput(args: unknown): ChatInput {
  const parsed = chatInput.safeParse(args);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "arguments";
  throw new Error(`invalid ${where}: ${issue?.message ?? "expected { prompt, attachments? }"}`);
}

/** The user message content for a chat input: the prompt, then each attachment as a part. */
export function chatInputContent(input: ChatInput): string | UserContentPart[] {
  if (!input.attachments?.length) return input.prompt;
  const parts: UserContentPart[] = [{ type: "text", text: input.prompt }];
  for (const a of input.attachments) {
    const mimeType = a.mimeType ?? "application/octet-stream";
    if (mimeType.startsWith("image/")) parts.push({ type: "image", mimeType, url: a.url });
    else parts.push({ type: "file", mimeType, url: a.url, ...(a.name ? { name: a.name } : {}) });
  }
  return parts;
}

/** Runs one turn; `TurnProcessor.process` has this shape. */
export type RunTurn = (request: TurnRequest, options: TurnOptions) => Promise<TurnReply>;

/**
 * The tools for an agent's `agents: [...]` list (or `others`: also the agents its Go `tools`
 * list names). Unknown names and the agent itself are left
 * out (reported through the runtime's logger). `runTurn` defaults to a direct session turn;
 * the AgentLoop may pass its own `process` so sub-agent turns share its bookkeeping. A call
 * that would close a cycle or nest deeper than `agents.defaults.maxSubagentDepth` is a tool
 * error (subagent-chain.ts).
 */
export function createSubagentTools(runtime: Runtime, agentConfig: AgentConfig | undefined, runTurn?: RunTurn, others: readonly string[] = agentConfig?.agents ?? []): Tool[] {
  const named = runtime.config.agents.named;
  const parent = Object.keys(named).find((key) => named[key] === agentConfig) ?? "nanobot";
  const run: RunTurn = runTurn ?? ((request, options) => new DirectTurnProcessor(runtime).process(request, options));
  const maxDepth = runtime.config.agents.defaults.maxSubagentDepth ?? DEFAULT_MAX_SUBAGENT_DEPTH;
  const tools: Tool[] = [];
  for (const other of new Set(others)) {
    if (!named[other]) {
      runtime.logger.warn(`agent "${parent}" lists unknown sub-agent "${other}"`, { known: Object.keys(named) });
      continue;
    }
    if (other === parent) continue;
    tools.push(subagentTool(parent, other, named[other]?.description, run, maxDepth));
  }
  return tools;
}

function subagentTool(parent: string, other: string, description: string | undefined, run: RunTurn, maxDepth: number): Tool {
  return {
    name: fitToolName(`chat-with-${other}`),
    description: `${description ?? `Ask the ${other} agent.`} It works on the prompt with its own instructions and tools and returns its final answer; it does not see this conversation, so put everything it needs in the prompt.`,
    parameters: CHAT_INPUT_SCHEMA,
    async execute(args, ctx, signal): Promise<ToolOutput> {
      const input = parseChatInput(args);
      const chain = chainFor(ctx.sessionKey, parent);
      const refused = refuseSubagentCall(chain, other, maxDepth);
      if (refused) return { isError: true, content: [{ type: "text", text: refused }] };
      let step = 0;
      const onEvent = (event: AgentEvent): void => {
        // Surface the sub-agent's tool activity as progress of this call.
        if (event.type === "tool_call") ctx.progress?.(++step, undefined, `${other}: ${event.toolCall.name}`);
      };
      const sessionKey = `subagent:${parent}:${other}:${randomUUID().slice(0, 8)}`;
      const leave = enterSubagentSession(sessionKey, [...chain, other]);
      let reply: TurnReply;
      try {
        reply = await run(
          {
            sessionKey,
            content: chatInputContent(input),
            agent: other,
            channel: "subagent",
            metadata: { parentSessionKey: ctx.sessionKey, parentCallId: ctx.callId, subagentChain: [...chain, other] },
          },
          { signal, onEvent },
        );
      } finally {
        leave();
      }
      if (reply.error !== undefined) return { isError: true, content: [{ type: "text", text: `${other} failed: ${reply.error}` }] };
      if (reply.stopReason === "aborted") return { isError: true, content: [{ type: "text", text: `${other} was stopped` }] };
      return reply.content.trim() ? reply.content : NO_CONTENT;
    },
  };
}
