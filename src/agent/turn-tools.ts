/**
 * The tools a turn gets on top of its agent's profile, bound to that turn: `message`
 * delivering to the conversation's bus route (and suppressing the final reply when it answered
 * there), `cron` and the goal tools bound to the session, and `spawn` reporting back to it.
 * An agent with an explicit `tools` list gets only the ones it names, and its `permissions`
 * apply to these as to the other built-ins (a tool no permission names follows `*`).
 */
import type { MessageBus } from "../bus/types.js";
import { newId } from "../core/ids.js";
import type { CronService } from "../cron/cron-service.js";
import { createCronTool } from "../cron/cron-tool.js";
import type { SessionStore } from "../session/types.js";
import { createMessageTool } from "../tools/builtin/message.js";
import type { Tool } from "../tools/tool.js";
import { createGoalTools } from "./goals.js";
import type { OutboundRelay } from "./outbound-relay.js";
import { isBuiltinAllowed } from "./permissions.js";
import type { AgentProfile } from "./runtime.js";
import type { WorkItem } from "./session-lanes.js";
import type { SubagentManager } from "./subagents.js";

export interface TurnToolsInput {
  profile: AgentProfile;
  item: WorkItem;
  relay: OutboundRelay | undefined;
  bus: MessageBus | undefined;
  subagents: SubagentManager;
  cron: CronService | undefined;
  store: SessionStore;
}

export function buildTurnTools(input: TurnToolsInput): Tool[] {
  const { profile, item, relay, bus } = input;
  const permissions = profile.config?.permissions;
  const allowed = (name: string): boolean =>
    (!profile.config?.tools || profile.config.tools.includes(name)) && isBuiltinAllowed(permissions, name);
  const route = item.route;
  const origin = {
    sessionKey: item.sessionKey,
    ...(route ? { channel: route.channel, chatId: route.chatId } : {}),
    ...(item.request.agent ? { agent: item.request.agent } : {}),
  };
  const tools: Tool[] = [];
  if (relay && bus && allowed("message")) tools.push(busMessageTool(bus, relay));
  if (input.cron && allowed("cron")) tools.push(createCronTool(input.cron, origin));
  if (allowed("create_goal")) tools.push(...createGoalTools(input.store, item.sessionKey));
  if (allowed("spawn")) tools.push(input.subagents.createSpawnTool(profile, origin));
  return tools;
}

function busMessageTool(bus: MessageBus, relay: OutboundRelay): Tool {
  const route = relay.route;
  const inner = createMessageTool(async (m) => {
    await bus.publishOutbound({ kind: "message", id: newId("msg"), channel: m.channel ?? route.channel, chatId: m.chatId ?? route.chatId, content: m.content });
  });
  return {
    ...inner,
    execute: async (args, ctx, signal) => {
      const output = await inner.execute(args, ctx, signal);
      // Only an answer delivered to this very conversation replaces the final reply.
      const here = (!args.channel || args.channel === route.channel) && (!args.chatId || args.chatId === route.chatId);
      if (typeof output !== "string" && output.suppressFinalReply && here) relay.suppressed = true;
      return output;
    },
  };
}
