/**
 * One turn of a session: persist the user's message, replay the history, run the engine, and
 * commit, roll back or stop the turn in the store. The AgentLoop runs the same pieces
 * (`runTurnEngine`, `saveTurnOutcome`) as separate timed stages; direct callers (tests,
 * scripts) can use `runSessionTurn` alone.
 */
import { sharedTokenEstimator } from "../engine/tokens/estimator.js";
import { runAgent } from "../engine/loop/run-agent.js";
import type { AgentHooks } from "../engine/hooks.js";
import type { AgentEvent, Checkpoint, RunResult } from "../core/events.js";
import type { Message } from "../core/messages.js";
import { systemMessage } from "../core/message-helpers.js";
import { errorMessage, isAbortError } from "../core/errors.js";
import type { UserContentPart } from "../core/messages.js";
import { MessageNotStoredError, TurnAlreadyAnsweredError, TurnNotResumableError } from "../session/types.js";
import type { CloseTurnOptions, SessionStore, TurnHandle } from "../session/types.js";
import type { Tool } from "../tools/tool.js";
import { externalTool } from "../tools/external-tool.js";
import type { ToolDefinition } from "../core/llm.js";
import { toolMessage } from "../core/message-helpers.js";
import { CheckpointPolicy } from "./checkpoint-policy.js";
import { prepareGoTurn } from "./go-hooks.js";
import { refusedBuiltins } from "./permissions.js";
import type { AgentProfile, Runtime } from "./runtime.js";
import { prepareTurnInput } from "./turn-input.js";
import { expandUiPrompt, uiToolActionHook } from "./ui-action-turn.js";

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
  /** Called once the turn is persisted (a caller settling a failure needs its id). */
  onTurnBegun?: (turnId: string) => void;
  /** Tools the caller runs itself (the OpenAI API's `tools[]`); a call to one ends the turn with `external_tool`. */
  externalTools?: readonly ToolDefinition[];
  /** The caller's answers to the external calls the turn stopped at: resumes that turn (no new message). */
  toolResults?: ReadonlyArray<{ toolCallId: string; content: string }>;
  /** The id the stored user message gets (an Idempotency-Key's first attempt chose it). */
  messageId?: string;
  /**
   * Answer this stored user message, whose turn a process that died left interrupted, instead of
   * storing a new one; a message never stored is stored now with this id, and a turn that had
   * completed gives its stored answer without running.
   */
  resumeMessageId?: string;
}

export interface SessionTurnResult extends RunResult {
  sessionKey: string;
  turnId: string;
  /** User-facing notes, e.g. that the message was cut to fit the model. */
  warnings?: string[];
}

/** Fraction of the window the replayed history may take, leaving room for the turn itself. */
export const HISTORY_SHARE = 0.6;

/** Tokens the replayed history of a turn may take for this profile. */
export function historyBudget(profile: Pick<AgentProfile, "contextWindow" | "maxTokens">): number {
  return Math.max(1_000, Math.floor((profile.contextWindow - profile.maxTokens) * HISTORY_SHARE));
}

export interface TurnEngineInput {
  turnId: string;
  sessionKey: string;
  profile: AgentProfile;
  /** System prompt, history and this turn's user message. */
  messages: Message[];
  /** Replaces the profile's tools for this turn (the loop adds message/spawn). */
  tools?: readonly Tool[];
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  drainInjections?: (limit: number) => Message[] | Promise<Message[]>;
  hooks?: AgentHooks | readonly AgentHooks[];
}

export interface TurnEngineOutcome {
  result: RunResult;
  /** The last checkpoint saved (a stopped turn keeps the tool work it holds). */
  lastCheckpoint?: Checkpoint;
}

/**
 * Runs the engine for a begun turn, saving each checkpoint but the final one. Callers close the
 * turn with `saveTurnOutcome` right after. Throws only for unexpected failures.
 */
export async function runTurnEngine(runtime: Runtime, input: TurnEngineInput): Promise<TurnEngineOutcome> {
  const store = runtime.store();
  const { sessionKey } = input;
  const outcome: { lastCheckpoint?: Checkpoint } = {};
  // Go nanobot agent hooks (config / request / response as MCP tool calls), when the agent has any.
  const go = await prepareGoTurn(runtime, {
    profile: input.profile,
    tools: input.tools ?? input.profile.tools,
    messages: input.messages,
    sessionKey,
    ...(input.signal ? { signal: input.signal } : {}),
    warn: (message) => {
      runtime.logger.warn(message, { sessionKey });
      input.onEvent?.({ type: "warning", message });
    },
  });
  const profile = go.profile;
  const callerHooks = input.hooks === undefined ? [] : Array.isArray(input.hooks) ? (input.hooks as readonly AgentHooks[]) : [input.hooks as AgentHooks];
  // An MCP-UI tool action plays the model; after Go's request hooks, which may still answer first.
  const uiAction = await uiToolActionHook(runtime, go.messages, go.tools);
  const goHooks = uiAction ? [...go.hooks, uiAction] : go.hooks;
  const hooks = goHooks.length > 0 ? [...goHooks, ...callerHooks] : input.hooks;
  const policy = new CheckpointPolicy(go.tools, hooks);
  const stream = runAgent(
    {
      model: profile.model,
      messages: go.messages,
      tools: go.tools,
      // A built-in the agent's permissions deny is refused by name, with the reason.
      refusedTools: go.refused ?? refusedBuiltins(profile.config?.permissions, go.tools),
      toolChoice: profile.toolChoice,
      temperature: profile.temperature,
      reasoningEffort: profile.reasoningEffort,
      reasoningSummary: profile.reasoningSummary,
      topP: profile.topP,
      truncation: profile.truncation,
      toolExtensions: profile.toolExtensions,
      output: profile.output,
      maxToolIterations: profile.maxToolIterations,
      maxToolResultChars: profile.maxToolResultChars,
      contextWindow: profile.contextWindow,
      maxTokens: profile.maxTokens,
      omitMaxTokens: profile.omitMaxTokens,
      // agents.defaults.contextBlockLimit (the Python key): the prompt's token budget, when set.
      ...(runtime.config.agents.defaults.contextBlockLimit !== undefined ? { contextBlockLimit: runtime.config.agents.defaults.contextBlockLimit } : {}),
      outputDir: runtime.sessionDir(sessionKey),
      workspace: runtime.workspace,
      sessionKey,
      hooks,
      drainInjections: input.drainInjections,
      estimator: sharedTokenEstimator(profile.modelRef),
      onCheckpoint: async (checkpoint) => {
        outcome.lastCheckpoint = checkpoint;
        // The final answer is written with the turn's closing (saveTurnOutcome), in one
        // transaction; quick read-only rounds too (see CheckpointPolicy).
        if (!policy.shouldWrite(checkpoint)) return;
        await store.saveCheckpoint(input.turnId, checkpoint);
        policy.wrote(checkpoint);
      },
      log: (level, msg, data) => runtime.logger[level](msg, data),
    },
    input.signal,
  );
  if (input.onEvent) stream.subscribe(input.onEvent);
  const result = await stream.result();
  return { result, ...(outcome.lastCheckpoint ? { lastCheckpoint: outcome.lastCheckpoint } : {}) };
}

/** Commits, rolls back or stops the turn according to how the run ended. */
export async function saveTurnOutcome(store: SessionStore, turnId: string, outcome: TurnEngineOutcome, options?: CloseTurnOptions): Promise<void> {
  const { result } = outcome;
  if (result.stopReason === "aborted") await store.stopTurn(turnId, outcome.lastCheckpoint, options);
  else if (result.stopReason === "error") await store.failTurn(turnId, result.error, options);
  else await store.completeTurn(turnId, result, options);
}

/** Closes a turn whose run threw: the thread must stay legal (user message kept, marker after it). */
export async function closeThrownTurn(store: SessionStore, turnId: string, err: unknown, lastCheckpoint?: Checkpoint): Promise<void> {
  if (isAbortError(err)) await store.stopTurn(turnId, lastCheckpoint);
  else await store.failTurn(turnId, err);
}

export async function runSessionTurn(runtime: Runtime, input: SessionTurnInput): Promise<SessionTurnResult> {
  const store = runtime.store();
  const { profile, sessionKey } = input;
  const estimator = sharedTokenEstimator(profile.modelRef);
  const loadHistory = (): Promise<Message[]> => store.loadHistory(sessionKey, { tokenBudget: historyBudget(profile), estimate: (m) => estimator.message(m) });
  let warning: string | undefined;
  let turnId: string;
  let opening: () => Promise<Message[]>;
  const reopen = input.resumeMessageId !== undefined && !input.toolResults ? await reopenTurn(store, sessionKey, input.resumeMessageId) : undefined;
  if (reopen && "answered" in reopen) {
    const { turnId: answeredBy, answer } = reopen.answered;
    return { content: answer, newMessages: [], toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 }, stopReason: "completed", iterations: 0, sessionKey, turnId: answeredBy };
  }
  if (reopen) {
    // The message, and what the dead turn saved, are in the history already.
    turnId = reopen.turnId;
    opening = loadHistory;
  } else if (input.toolResults) {
    // The open turn's messages come back from the store; the history before it is replayed as usual.
    const history = await loadHistory();
    const resumed = await store.resumeTurn(sessionKey, input.toolResults.map((r) => toolMessage(r.toolCallId, "", r.content)));
    turnId = resumed.handle.turnId;
    opening = async () => [...history, ...resumed.messages];
  } else {
    const content = await expandUiPrompt(runtime, profile.tools, input.content, input.signal, profile.config?.prompts);
    const prepared = await prepareTurnInput(runtime, profile, sessionKey, content);
    warning = prepared.warning;
    if (warning) input.onEvent?.({ type: "warning", message: warning });
    const id = input.messageId ?? input.resumeMessageId;
    const user = id === undefined ? prepared.message : { ...prepared.message, id };
    turnId = (await store.beginTurn(sessionKey, user)).turnId;
    opening = async () => {
      const history = await loadHistory();
      return history.some((m) => m.id === user.id) ? history : [...history, user];
    };
  }
  const turn = { turnId };
  input.onTurnBegun?.(turn.turnId);
  try {
    const system = [profile.instructions, input.systemExtra].filter(Boolean).join("\n\n");
    const messages: Message[] = [systemMessage(system), ...(await opening())];
    // The caller's own tools win a name clash with the agent's.
    const external = (input.externalTools ?? []).map(externalTool);
    const tools = external.length > 0 ? [...profile.tools.filter((t) => !external.some((e) => e.name === t.name)), ...external] : undefined;
    const outcome = await runTurnEngine(runtime, {
      turnId: turn.turnId,
      sessionKey,
      profile,
      messages,
      ...(tools ? { tools } : {}),
      signal: input.signal,
      onEvent: input.onEvent,
      drainInjections: input.drainInjections,
      hooks: input.hooks,
    });
    await saveTurnOutcome(store, turn.turnId, outcome);
    return { ...outcome.result, sessionKey, turnId: turn.turnId, ...(warning ? { warnings: [warning] } : {}) };
  } catch (err) {
    await closeThrownTurn(store, turn.turnId, err);
    runtime.logger.error("turn failed", { sessionKey, error: errorMessage(err) });
    throw err;
  }
}

/**
 * The reopened turn; undefined when its message was never stored (the turn then begins as new,
 * with that message id); `answered` when the turn had completed (its answer is the reply).
 */
export async function reopenTurn(store: SessionStore, sessionKey: string, messageId: string): Promise<TurnHandle | { answered: TurnAlreadyAnsweredError } | undefined> {
  if (!store.reopenInterruptedTurn) throw new TurnNotResumableError("this session store cannot resume an interrupted turn");
  try {
    return await store.reopenInterruptedTurn(sessionKey, messageId);
  } catch (error) {
    if (error instanceof MessageNotStoredError) return undefined;
    if (error instanceof TurnAlreadyAnsweredError) return { answered: error };
    throw error;
  }
}
