/**
 * Where a Go agent's turn keeps its conversation. `threadName: x` gives the agent its own
 * thread inside the caller's session (`<session>/thread/x`, Go's `thread/<name>` key), so two
 * agents in one session do not share history. `chat: false` makes every call a one-shot: the
 * turn runs in a fresh session that is deleted once it has answered (Go: not saved).
 */
import { randomUUID } from "node:crypto";
import { defaultAgentName } from "../config/config-helpers.js";
import type { NanobotConfig } from "../config/index.js";

export interface AgentThread {
  sessionKey: string;
  /** Delete the session once the turn has answered (`chat: false`). */
  ephemeral: boolean;
}

export function agentThread(config: NanobotConfig, sessionKey: string, agentName: string | undefined): AgentThread {
  const name = agentName && agentName !== "nanobot" ? agentName : defaultAgentName(config);
  const agent = name ? config.agents.named[name] : undefined;
  if (!agent) return { sessionKey, ephemeral: false };
  if (agent.chat === false) return { sessionKey: `${sessionKey}/oneshot/${randomUUID()}`, ephemeral: true };
  if (agent.threadName) return { sessionKey: `${sessionKey}/thread/${agent.threadName.replace(/[^A-Za-z0-9_.-]/g, "_")}`, ephemeral: false };
  return { sessionKey, ephemeral: false };
}
