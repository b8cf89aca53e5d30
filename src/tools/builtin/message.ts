/**
 * message: sends a message to the user through the product layer (bus → channel). A turn that
 * used it has already spoken, so the result carries `suppressFinalReply` and the product
 * layer does not send the final assistant text as well.
 */
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";

export interface OutboundMessage {
  content: string;
  /** Target channel (`telegram`, `slack`, …); the current conversation's when absent. */
  channel?: string;
  chatId?: string;
  /** The session the call came from, so the product layer can default channel and chat. */
  sessionKey?: string;
}

/** The seam the product layer provides; it resolves once the message is handed to the bus. */
export type SendMessage = (message: OutboundMessage, signal: AbortSignal) => Promise<void>;

const schema = z.object({
  content: z.string().min(1).describe("The message text."),
  channel: z.string().min(1).optional().describe("Channel to send to (default: the current conversation's)."),
  chatId: z.string().min(1).optional().describe("Chat or user id within the channel (default: the current chat)."),
});

export function createMessageTool(sendMessage: SendMessage): Tool {
  return defineTool({
    name: "message",
    description:
      "Send a message to the user now (or to another channel/chat when channel and chatId are given). " +
      "Use it for progress updates or to deliver the answer; after using it, do not repeat the same text " +
      "as your final reply — the final reply of this turn is not sent.",
    schema,
    async run(args, ctx, signal) {
      const target = args.channel ? `${args.channel}${args.chatId ? `:${args.chatId}` : ""}` : "the current conversation";
      try {
        await sendMessage(
          {
            content: args.content,
            ...(args.channel ? { channel: args.channel } : {}),
            ...(args.chatId ? { chatId: args.chatId } : {}),
            ...(ctx.sessionKey ? { sessionKey: ctx.sessionKey } : {}),
          },
          signal,
        );
      } catch (error) {
        return errorResult(`Error: could not send the message to ${target}: ${(error as Error).message}`);
      }
      return { content: [{ type: "text", text: `Message sent to ${target}.` }], suppressFinalReply: true };
    },
  });
}
