/**
 * One turn of a session: persist the user's message, replay the history, run the engine, and
 * commit, roll back or stop the turn in the store. The AgentLoop wraps this with locks, queues
 * and commands; direct callers (tests, scripts) can use it alone.
 */
import { sharedTokenEstimator } from "../engine/tokens/estimator.js";
import { runAgent } from "../engine/loop/run-agent.js";
import type { AgentHooks } from "../engine/hooks.js";
import type { AgentEvent, Checkpoint, RunResult } from "../core/events.js";
import type { Message } from "../core/messages.js";
import { systemMessage, userMessage } from "../core/message-helpers.js";
import { errorMessage, isAbortError } from "../core/errors.js";
import type { UserContentPart } from "../core/messages.js";
import type { AgentProfile, Runtime } from "./runtime.js";

export interface SessionTurnInput {
  sessionKey: string;
  content: string | UserContentPart[];
  profile: AgentProfile;
  signal?: AbortSignal;
  /** Every engine event, as it happens (streaming faces). */
  onEvent?: (event: AgentEvent) => void;
  /** Mid-turn messages for the engine to inject at the next boundary. */
  drainInjections?: (limit: number) => Message[] | Promise<Message[]>;
  hooks?: AgentHooks | readonly AgentHooks[];
  /** Extra system text appended after the agent's instructions (memory, skills, …). */
  systemExtra?: string;
}

export interface SessionTurnResult extends RunResult {
  sessionKey: string;
  turnId: string;
}

/** Fraction of the window the replayed history may take, leaving room for the turn itself. */
const HISTORY_SHARE = 0.6;

export async function runSessionTurn(runtime: Runtime, input: SessionTurnInput): Promise<SessionTurnResult> {
  const store = runtime.store();
  const { profile, sessionKey } = input;
  const user = userMessage(input.content);
  const turn = await store.beginTurn(sessionKey, user);
  let lastCheckpoint: Checkpoint | undefined;
  try {
    const estimator = sharedTokenEstimator(profile.modelRef);
    const budget = Math.max(1_000, Math.floor((profile.contextWindow - profile.maxTokens) * HISTORY_SHARE));
    const history = await store.loadHistory(sessionKey, { tokenBudget: budget, estimate: (m) => estimator.message(m) });
    const system = [profile.instructions, input.systemExtra].filter(Boolean).join("\n\n");
    const messages: Message[] = [systemMessage(system), ...history];
    if (!history.some((m) => m.id === user.id)) messages.push(user);
    const stream = runAgent(
      {
        model: profile.model,
        messages,
        tools: profile.tools,
        toolChoice: profile.toolChoice,
        temperature: profile.temperature,
        reasoningEffort: profile.reasoningEffort,
        output: profile.output,
        maxToolIterations: profile.maxToolIterations,
        maxToolResultChars: profile.maxToolResultChars,
        contextWindow: profile.contextWindow,
        maxTokens: profile.maxTokens,
        outputDir: runtime.sessionDir(sessionKey),
        workspace: runtime.workspace,
        sessionKey,
        hooks: input.hooks,
        drainInjections: input.drainInjections,
        estimator,
        onCheckpoint: async (checkpoint) => {
          lastCheckpoint = checkpoint;
          await store.saveCheckpoint(turn.turnId, checkpoint);
        },
        log: (level, msg, data) => runtime.logger[level](msg, data),
      },
      input.signal,
    );
    if (input.onEvent) stream.subscribe(input.onEvent);
    const result = await stream.result();
    if (result.stopReason === "aborted") await store.stopTurn(turn.turnId, lastCheckpoint);
    else if (result.stopReason === "error") await store.failTurn(turn.turnId, result.error);
    else await store.completeTurn(turn.turnId, result);
    return { ...result, sessionKey, turnId: turn.turnId };
  } catch (err) {
    // Whatever went wrong, the thread must stay legal: user message kept, error marker after it.
    if (isAbortError(err)) await store.stopTurn(turn.turnId, lastCheckpoint);
    else await store.failTurn(turn.turnId, err);
    runtime.logger.error("turn failed", { sessionKey, error: errorMessage(err) });
    throw err;
  }
}
