/**
 * One turn through the product stages: restore (profile, dangling turns, history) → compact
 * (memory consolidation) → command (slash commands short-circuit here) → build (system prompt)
 * → run (persist the user message, run the engine) → save → respond. The AgentLoop owns
 * locking and delivery; this owns what happens inside the lock.
 */
import { ModelSlot, type AcquireSlot } from "./model-slot.js";
import type { AgentEvent } from "../core/events.js";
import { errorMessage } from "../core/errors.js";
import { systemMessage, toolMessage } from "../core/message-helpers.js";
import type { Message, Usage } from "../core/messages.js";
import { sharedTokenEstimator } from "../engine/tokens/estimator.js";
import { consolidateIfNeeded } from "../memory/consolidate.js";
import { trimToBudget } from "../session/history.js";
import { isConnectionError } from "../session/pg-db.js";
import { externalTool } from "../tools/external-tool.js";
import type { Tool } from "../tools/tool.js";
import { parseCommand } from "./commands/registry.js";
import type { CommandHost } from "./commands/registry.js";
import type { ContextBuilder } from "./context-builder.js";
import { goalPrompt, readGoal } from "./goals.js";
import type { AgentProfile, Runtime } from "./runtime.js";
import { closeThrownTurn, historyBudget, reopenTurn, runTurnEngine, saveTurnOutcome } from "./session-turn.js";
import type { TurnEngineOutcome } from "./session-turn.js";
import { StageTimer } from "./stage-timer.js";
import { ToolTallyCounter } from "./tool-tally.js";
import type { StageTiming } from "./stage-timer.js";
import { turnErrorKind } from "./turn-failure.js";
import { prepareTurnInput } from "./turn-input.js";
import { expandUiPrompt } from "./ui-action-turn.js";
import type { TurnReply, TurnRequest } from "./turn-processor.js";

/** History is read up to this multiple of its budgets, so consolidation can see that it is full. */
const RESTORE_HEADROOM = 1.5;
/** Messages a replay is expected to read past its cap before it reaches a user message (a read hint). */
const CAP_SLACK = 8;
/** Messages replayed per turn when `agents.defaults.maxMessages` is unset (the Python nanobot's default). */
export const DEFAULT_MAX_MESSAGES = 120;

export interface TurnJob {
  request: TurnRequest;
  sessionKey: string;
  signal: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  drainInjections?: (limit: number) => Message[] | Promise<Message[]>;
  /** Turn-bound tools (the bus `message` tool, `spawn`); they replace profile tools of the same name. */
  extraTools?: (profile: AgentProfile) => Tool[];
  /** Called once the turn is persisted, before the engine starts (delivery ids, stream ids). */
  onTurnBegun?: (turnId: string) => void;
  /** Profile tools to leave out for this turn. */
  withoutTools?: readonly string[];
  /** The concurrency gate, taken at the turn's first model call (see ModelSlot). */
  modelSlot?: AcquireSlot;
}

export interface TurnOutcome {
  reply: TurnReply;
  timings: StageTiming[];
  /** The session had an active goal when the turn began (read with the turn's metadata). */
  goalActiveAtStart: boolean;
}

export interface TurnRunnerDeps {
  runtime: Runtime;
  context: ContextBuilder;
  host: CommandHost;
  consolidationRatio: number;
  /** Memory consolidation in the compact stage (default true; benchmarks turn it off). */
  consolidate?: boolean;
}

export async function runTurnStages(deps: TurnRunnerDeps, job: TurnJob): Promise<TurnOutcome> {
  const slot = new ModelSlot(job.modelSlot, job.signal);
  try {
    const outcome = await runStages(deps, job, slot);
    outcome.reply.timings = { ...slot.clock, stages: outcome.timings };
    return outcome;
  } finally {
    slot.give();
  }
}

async function runStages(deps: TurnRunnerDeps, job: TurnJob, slot: ModelSlot): Promise<TurnOutcome> {
  const { runtime, context } = deps;
  const { request, sessionKey } = job;
  const store = runtime.store();
  const timer = new StageTimer(runtime.logger, sessionKey);
  const text = typeof request.content === "string" ? request.content : request.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  // A resumed external-tool turn carries tool results, not a message: never a command.
  const resuming = request.toolResults !== undefined;
  const reopening = request.resumeMessageId;
  const command = resuming || reopening ? undefined : parseCommand(text);
  // 0 is the default, as in the Python nanobot.
  const maxMessages = runtime.config.agents.defaults.maxMessages || DEFAULT_MAX_MESSAGES;

  const restored = await timer.stage("restore", async () => {
    const metadata = await store.sessionMetadata(sessionKey);
    const preset = typeof metadata?.modelPreset === "string" ? metadata.modelPreset : undefined;
    const profile = await runtime.resolveAgent(request.agent, preset ? { modelPreset: preset } : {});
    if (command) return { profile, history: [] as Message[], metadata, reopened: undefined };
    if (metadata) await store.recoverDanglingTurns(sessionKey);
    // Before the history is read: reopening takes the interrupted turn's marker off it.
    const reopen = reopening ? await reopenTurn(store, sessionKey, reopening) : undefined;
    if (reopen && "answered" in reopen) return { profile, history: [] as Message[], metadata, reopened: undefined, answered: reopen.answered };
    const reopened = reopen;
    const estimator = sharedTokenEstimator(profile.modelRef);
    const budget = historyBudget(profile);
    const tokenBudget = Math.ceil(budget * RESTORE_HEADROOM);
    const messageCap = Math.ceil(maxMessages * RESTORE_HEADROOM);
    let read = 0;
    // Past the message cap every message "costs" the whole budget, so the read stops at the next user message.
    const estimate = (m: Message): number => (++read > messageCap ? tokenBudget + 1 : estimator.message(m));
    // The read runs a little past the cap, to the next user message.
    const history = metadata ? await store.loadHistory(sessionKey, { tokenBudget, estimate, expectedMessages: messageCap + CAP_SLACK }) : [];
    return { profile, history, metadata, reopened };
  });
  const { profile } = restored;
  // Read once: the prompt's goal section, and whether the loop must look for a next goal round.
  const goalAtStart = readGoal(restored.metadata);
  const goalActiveAtStart = goalAtStart?.status === "active";
  if ("answered" in restored && restored.answered) {
    const { turnId, answer } = restored.answered;
    return { reply: { content: answer, sessionKey, stopReason: "completed", toolsUsed: [], usage: zeroUsage(), turnId }, timings: timer.timings, goalActiveAtStart };
  }
  // A reopened turn is pending from here on: a later stage that throws must close it.
  if (restored.reopened) job.onTurnBegun?.(restored.reopened.turnId);

  let history = restored.history;
  if (!command && deps.consolidate !== false) {
    history = await timer.stage("compact", async () => {
      const estimator = sharedTokenEstimator(profile.modelRef);
      const outcome = await consolidateIfNeeded({
        store,
        sessionKey,
        history,
        // Timed as the turn's model time (Server-Timing), under the slot the run then keeps.
        model: slot.clocked(profile.model),
        estimate: (m) => estimator.message(m),
        // By tokens only, as the Python nanobot's consolidator: `maxMessages` caps what a turn
        // replays (below), it does not make a summary.
        budget: historyBudget(profile),
        ratio: deps.consolidationRatio,
        log: context.history,
        signal: job.signal,
        logger: runtime.logger,
      });
      return outcome.history;
    });
  }

  if (command) {
    const answer = await timer.stage("command", () =>
      deps.host.commands.run(command, { sessionKey, request, host: deps.host, signal: job.signal }),
    );
    const reply: TurnReply = { content: answer, sessionKey, stopReason: "completed", toolsUsed: [], usage: zeroUsage(), command: command.name };
    return { reply, timings: timer.timings, goalActiveAtStart };
  }

  const messages = await timer.stage("build", async () => {
    // A thread's session key carries the thread; the prompt names the chat the message came from.
    const { channel, chatId } = request.channel && request.chatId ? { channel: request.channel, chatId: request.chatId } : splitKey(sessionKey, request.channel);
    const goal = goalPrompt(goalAtStart);
    const built = context.build({ instructions: profile.instructions, sessionKey, channel, chatId, userText: text, extraSections: [goal] });
    // `maxMessages` is the replay cap (the Python nanobot's): past it the newest messages are
    // replayed, from a user message; the older ones stay stored and reach history.jsonl when the
    // token budget or idle compaction summarises them.
    const replay = history.length > maxMessages ? trimToBudget(history, maxMessages, () => 1) : history;
    return [systemMessage(built.system), ...replay];
  });

  // An MCP-UI prompt action becomes the prompt's text before it is stored (ui-action-turn.ts).
  const input = resuming || restored.reopened
    ? undefined
    : await prepareTurnInput(runtime, profile, sessionKey, await expandUiPrompt(runtime, profile.tools, request.content, job.signal, profile.config?.prompts));
  if (input?.warning) job.onEvent?.({ type: "warning", message: input.warning });
  let turnId = "";
  let contextTokens = 0;
  const tools = new ToolTallyCounter();
  const onEvent = (event: AgentEvent): void => {
    if (event.type === "llm_request") contextTokens = event.estimatedTokens;
    tools.observe(event);
    job.onEvent?.(event);
  };
  const outcome = await timer.stage("run", async (): Promise<TurnEngineOutcome> => {
    let opening: Message[];
    if (restored.reopened) {
      // The message is in the history already.
      turnId = restored.reopened.turnId;
      opening = [];
    } else if (input) {
      if (request.messageId) input.message = { ...input.message, id: request.messageId };
      const turn = await store.beginTurn(sessionKey, input.message);
      turnId = turn.turnId;
      opening = [input.message];
    } else {
      const results = (request.toolResults ?? []).map((r) => toolMessage(r.toolCallId, "", r.content));
      const resumed = await store.resumeTurn(sessionKey, results);
      turnId = resumed.handle.turnId;
      opening = resumed.messages;
    }
    if (!restored.reopened) job.onTurnBegun?.(turnId);
    // The caller's own tools win a name clash with the agent's (and with turn-bound ones).
    const external = (request.externalTools ?? []).map(externalTool);
    const extra = [...(job.extraTools?.(profile) ?? []).filter((t) => !external.some((e) => e.name === t.name)), ...external];
    const replaced = new Set([...extra.map((t) => t.name), ...(job.withoutTools ?? [])]);
    const tools = [...profile.tools.filter((t) => !replaced.has(t.name)), ...extra];
    try {
      return await runTurnEngine(runtime, {
        turnId,
        sessionKey,
        profile: { ...profile, model: slot.wrap(profile.model) },
        messages: [...messages, ...opening],
        tools,
        signal: job.signal,
        onEvent,
        drainInjections: job.drainInjections,
      });
    } catch (err) {
      await closeThrownTurn(store, turnId, err);
      runtime.logger.error("turn failed", { sessionKey, error: errorMessage(err) });
      throw err;
    }
  });

  slot.give();
  // Stopped because the session's lease was lost: not this worker's turn to close any more; the
  // next holder of the lease closes it as interrupted (the caller's retry resumes it).
  if (outcome.result.stopReason === "aborted" && isConnectionError(job.signal.reason)) throw job.signal.reason;
  await timer.stage("save", () => saveTurnOutcome(store, turnId, outcome, { metadata: closingMetadata(request, restored.metadata, outcome.result.usage, contextTokens, profile.modelRef) }));
  const reply = replyOf(outcome.result, sessionKey, turnId, input?.warning, tools);
  return { reply, timings: timer.timings, goalActiveAtStart };
}

/** The session metadata written with the turn's closing, in one transaction: usage totals and the last context. */
function closingMetadata(
  request: TurnRequest,
  metadata: Record<string, unknown> | null | undefined,
  usage: Usage,
  contextTokens: number,
  modelRef: string,
): Record<string, unknown> {
  const prev = (metadata?.usage ?? {}) as Partial<Usage>;
  const closing: Record<string, unknown> = {
    usage: {
      promptTokens: (prev.promptTokens ?? 0) + usage.promptTokens,
      completionTokens: (prev.completionTokens ?? 0) + usage.completionTokens,
    },
    lastContextTokens: contextTokens,
    lastModel: modelRef,
  };
  const chat = chatOf(request, metadata).chat;
  if (chat) closing.chat = chat;
  return closing;
}

function replyOf(result: TurnEngineOutcome["result"], sessionKey: string, turnId: string, warning: string | undefined, tools: ToolTallyCounter): TurnReply {
  const reply: TurnReply = {
    content: result.content,
    sessionKey,
    stopReason: result.stopReason,
    toolsUsed: result.toolsUsed,
    usage: result.usage,
    turnId,
  };
  if (result.stopReason === "error") {
    reply.error = firstLine(errorMessage(result.error));
    reply.errorKind = turnErrorKind(result.error);
  }
  if (warning) reply.warnings = [warning];
  if (result.externalToolCalls?.length) reply.externalToolCalls = result.externalToolCalls;
  return Object.assign(reply, tools.field);
}

function zeroUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0 };
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

/** Channel and chat of a `channel:chatId` key (the request's channel wins). */
/** The session's `chat` metadata to record with this turn: only when it is new or moved. */
function chatOf(request: TurnRequest, metadata: Record<string, unknown> | null | undefined): { chat?: { channel: string; chatId: string } } {
  const { channel, chatId } = request;
  if (!channel || !chatId) return {};
  const known = metadata?.chat as { channel?: unknown; chatId?: unknown } | undefined;
  if (known?.channel === channel && known.chatId === chatId) return {};
  return { chat: { channel, chatId } };
}

export function splitKey(sessionKey: string, channel?: string): { channel?: string; chatId?: string } {
  const at = sessionKey.indexOf(":");
  if (at <= 0) return channel ? { channel } : {};
  return { channel: channel ?? sessionKey.slice(0, at), chatId: sessionKey.slice(at + 1) };
}
