/**
 * A Go agent named by an MCP server's sampling hint answers as the Go nanobot answers it: the
 * agent runs its own full loop (its instructions, model, output schema and its own tools and
 * MCP servers) on the sampled messages, in a throwaway session, and its final text is the
 * sampling result. The Go research bot's `searchAgent` searches this way.
 */
import { randomUUID } from "node:crypto";
import { systemMessage } from "../core/message-helpers.js";
import type { Message, UserMessage } from "../core/messages.js";
import type { SamplingRequest, SamplingResponse } from "../mcp/types.js";
import type { Runtime } from "./runtime.js";
import { runTurnEngine, saveTurnOutcome } from "./session-turn.js";

/** True when the sampled messages end with a user message (a turn can start from them). */
export function endsWithUser(messages: readonly Message[]): boolean {
  return messages.at(-1)?.role === "user";
}

export async function runSampledAgent(runtime: Runtime, agentName: string, request: SamplingRequest, signal: AbortSignal): Promise<SamplingResponse> {
  const resolved = await runtime.resolveAgent(agentName);
  // The server's maxTokens can only lower the agent's own limit (and is sent when the agent sends none); its temperature wins (Go).
  const serverLimit = request.maxTokens > 0 && (resolved.omitMaxTokens === true || request.maxTokens < resolved.maxTokens);
  const profile = {
    ...resolved,
    ...(serverLimit ? { maxTokens: request.maxTokens, omitMaxTokens: false } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  };
  const store = runtime.store();
  const sessionKey = `sampling:${request.server}:${agentName}:${randomUUID().slice(0, 8)}`;
  const user = request.messages.at(-1) as UserMessage;
  const turn = await store.beginTurn(sessionKey, user);
  try {
    const system = [profile.instructions, request.systemPrompt].filter(Boolean).join("\n\n");
    const messages: Message[] = [systemMessage(system), ...request.messages];
    const outcome = await runTurnEngine(runtime, { turnId: turn.turnId, sessionKey, profile, messages, signal });
    await saveTurnOutcome(store, turn.turnId, outcome);
    const { result } = outcome;
    if (result.stopReason === "error") throw result.error instanceof Error ? result.error : new Error(String(result.error));
    if (result.stopReason === "aborted") throw new Error(`${agentName} was stopped`);
    return {
      text: result.content,
      model: profile.modelRef,
      stopReason: result.stopReason === "length" ? "maxTokens" : "endTurn",
    };
  } finally {
    // Nothing of a sampled run is kept (Go's sampled agents in the examples are `chat: false`).
    await store.deleteSession(sessionKey).catch(() => undefined);
  }
}
