/**
 * What a chat message from the bus becomes: the session it belongs to (its own key, the
 * `channel:chatId` key, or the unified one; an agent's thread when it names an agent), the route
 * its answer takes back (chat, streaming, the message it answers), and the turn request.
 */
import type { InboundMessage } from "../bus/types.js";
import type { NanobotConfig } from "../config/index.js";
import { sessionKeyFor } from "../session/keys.js";
import { agentThread } from "./agent-thread.js";
import { inboundContent } from "./inbound-content.js";
import type { ReplyRoute } from "./outbound-relay.js";
import type { TurnRequest } from "./turn-processor.js";

export interface InboundTurn {
  sessionKey: string;
  route: ReplyRoute;
  request: TurnRequest;
  /** The agent's thread lives for this turn only (deleted once it is answered). */
  ephemeral: boolean;
}

/** Throws when the message names no usable session (an invalid channel name or no chat id). */
export function inboundTurn(message: InboundMessage, config: NanobotConfig): InboundTurn {
  const baseKey = message.sessionKey ?? sessionKeyFor({ channel: message.channel, chatId: message.chatId, unified: config.agents.defaults.unifiedSession });
  const route: ReplyRoute = {
    channel: message.channel,
    chatId: message.chatId,
    stream: message.metadata?.stream === true,
    inboundId: message.id,
    ...(typeof message.metadata?.messageId === "string" ? { replyTo: message.metadata.messageId } : {}),
  };
  const agent = typeof message.metadata?.agent === "string" ? message.metadata.agent : undefined;
  const thread = agentThread(config, baseKey, agent);
  const request: TurnRequest = {
    sessionKey: thread.sessionKey,
    content: inboundContent(message),
    channel: message.channel,
    chatId: message.chatId,
    senderId: message.senderId,
    ...(agent ? { agent } : {}),
    ...(message.metadata ? { metadata: message.metadata } : {}),
  };
  return { sessionKey: thread.sessionKey, route, request, ephemeral: thread.ephemeral };
}
