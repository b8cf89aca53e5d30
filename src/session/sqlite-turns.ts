/**
 * The turn lifecycle over SQLite, as synchronous steps the store runs inside one write
 * transaction each. A turn owns the rows after its user message (`turn_id`); checkpoints and
 * the final result only add the rows that are new, so saving costs O(new messages).
 */
import { errorMessage, turnId as newTurnId } from "../core/index.js";
import type { Checkpoint, Message, RunResult, ToolMessage, UserMessage } from "../core/index.js";
import {
  MODEL_ERROR_MARKER,
  TOOL_INTERRUPTED,
  TURN_INTERRUPTED,
  assistantMarker,
  interruptedResults,
  sanitizeToolResults,
  unansweredToolCalls,
} from "./repair.js";
import { attemptTurnIds, planReopen } from "./reopen-plan.js";
import { rowToMessage } from "./rows.js";
import type { SessionQueries, TurnRow } from "./sqlite-queries.js";
import { titleFromMessage } from "./title.js";
import { SessionStoreError, UnmatchedToolResultError } from "./types.js";
import type { TurnHandle } from "./types.js";

export interface TurnOps {
  q: SessionQueries;
  now: () => number;
  /** Called with tool results dropped while saving (orphans, duplicates, undeclared calls). */
  onDropped?: (turnId: string, count: number) => void;
}

export function beginTurn(ops: TurnOps, sessionKey: string, userMessage: UserMessage): TurnHandle {
  const recoveredTurns = recoverDanglingTurns(ops, sessionKey);
  const { q, now } = ops;
  const thread = q.currentThread(sessionKey);
  const id = newTurnId();
  const seq = q.append(thread.id, [userMessage], id);
  q
    .prepare(
      `INSERT INTO turns (id, session_key, thread_id, status, user_message_id, start_seq, started_at)
       VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
    )
    .run(id, sessionKey, thread.id, userMessage.id, seq, now());
  if (thread.title === null) giveTitle(ops, sessionKey, thread.id, userMessage);
  return { turnId: id, sessionKey, threadId: thread.id, userMessageId: userMessage.id, recoveredTurns };
}

/** Text of the result a call gets when the caller that was to run it sent none back. */
export const EXTERNAL_RESULT_MISSING = "Error: the caller returned no result for this tool call.";

/**
 * A turn that continues a run that stopped for external tools (`external_tool`): the caller's
 * results open it in place of a user message. Each must answer a call still open at the end of
 * the thread; open calls the caller left out get an error result. The last result anchors the
 * turn (`user_message_id`), so a rollback keeps the results and only drops what the run added.
 */
export function beginResumedTurn(ops: TurnOps, sessionKey: string, results: readonly ToolMessage[]): { handle: TurnHandle; messages: Message[] } {
  const recoveredTurns = recoverDanglingTurns(ops, sessionKey);
  const { q, now } = ops;
  const thread = q.currentThread(sessionKey);
  const open = q.openCallsAtTail(thread.id);
  const { kept, dropped } = sanitizeToolResults(results, open.map((c) => c.id));
  if (kept.length === 0 || dropped.length > 0) {
    const stray = (dropped.length > 0 ? dropped : results).map((r) => r.toolCallId).join(", ") || "(none)";
    throw new UnmatchedToolResultError(`no open tool call in ${sessionKey} for result ${stray} (open: ${open.map((c) => c.id).join(", ") || "none"})`);
  }
  // The caller knows the call by id; the name is the one the model used.
  const names = new Map(open.map((c) => [c.id, c.name]));
  const answers = (kept as ToolMessage[]).map((m): ToolMessage => ({ ...m, toolName: names.get(m.toolCallId) ?? m.toolName }));
  const answered = new Set(answers.map((m) => m.toolCallId));
  const messages: Message[] = [...answers, ...interruptedResults(open.filter((c) => !answered.has(c.id)), EXTERNAL_RESULT_MISSING)];
  const id = newTurnId();
  const anchor = messages.at(-1)!;
  const seq = q.append(thread.id, messages, id) + messages.length - 1;
  q
    .prepare(
      `INSERT INTO turns (id, session_key, thread_id, status, user_message_id, start_seq, started_at)
       VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
    )
    .run(id, sessionKey, thread.id, anchor.id, seq, now());
  return { handle: { turnId: id, sessionKey, threadId: thread.id, userMessageId: anchor.id, recoveredTurns }, messages };
}

/**
 * A thread's first turn titles it; the session takes the title of its first titled thread
 * (`metadata.title`, what `sessions list` shows), unless it already has one.
 */
function giveTitle(ops: TurnOps, sessionKey: string, threadId: string, userMessage: UserMessage): void {
  const title = titleFromMessage(userMessage);
  if (!title) return;
  const { q } = ops;
  q.prepare("UPDATE threads SET title = ? WHERE id = ? AND title IS NULL").run(title, threadId);
  const session = q.requireSession(sessionKey);
  const metadata = JSON.parse(session.metadata) as Record<string, unknown>;
  if (typeof metadata.title === "string" && metadata.title !== "") return;
  q.prepare("UPDATE sessions SET metadata = ? WHERE key = ?").run(JSON.stringify({ ...metadata, title }), sessionKey);
}

export function saveCheckpoint(ops: TurnOps, turnId: string, checkpoint: Checkpoint): void {
  const turn = pendingTurn(ops, turnId);
  syncTurnRows(ops, turn, checkpointMessages(checkpoint));
  ops.q
    .prepare(
      `INSERT INTO checkpoints (turn_id, phase, iteration, pending_tool_calls, count, updated_at)
       VALUES (@turn, @phase, @iteration, @pending, 1, @now)
       ON CONFLICT(turn_id) DO UPDATE SET phase = @phase, iteration = @iteration,
         pending_tool_calls = @pending, count = count + 1, updated_at = @now`,
    )
    .run({
      turn: turnId,
      phase: checkpoint.phase,
      iteration: checkpoint.iteration,
      pending: JSON.stringify(checkpoint.pendingToolCalls ?? []),
      now: ops.now(),
    });
}

/** Commits the run's messages; an `error` result is a failure, an `aborted` one a stop. Returns the turn's session key. */
export function completeTurn(ops: TurnOps, turnId: string, result: RunResult): string {
  if (result.stopReason === "error") {
    // Messages the user sent mid-turn (injected) survive the rollback like the turn's own input.
    const userInput = result.newMessages.filter((m) => m.role === "user" && m.meta?.["synthetic"] !== true && m.meta?.["compactionSummary"] !== true);
    return failTurn(ops, turnId, result.error ?? "run ended with an error", userInput);
  }
  const turn = pendingTurn(ops, turnId);
  const rows = syncTurnRows(ops, turn, result.newMessages);
  // Calls the caller executes itself stay open; anything else must be answered.
  if (result.stopReason !== "external_tool") closeOpenCalls(ops, turn, rows, TOOL_INTERRUPTED);
  const summary = [...rows].reverse().find((m) => m.meta?.["summary"] === true);
  if (summary) {
    const row = ops.q.messageRow(summary.id)!;
    ops.q
      .prepare("UPDATE threads SET replay_seq = ?, summary_seq = ? WHERE id = ?")
      .run(turn.start_seq, row.seq, turn.thread_id);
  }
  const status = result.stopReason === "aborted" ? "stopped" : "completed";
  closeTurn(ops, turn, status, {
    stopReason: result.stopReason,
    usage: result.usage,
    extraTimings: { iterations: result.iterations, toolsUsed: result.toolsUsed },
  });
  return turn.session_key;
}

/**
 * Rolls the turn back to what the user said — its user message and any user messages injected
 * mid-turn (already saved by a checkpoint, or passed in `userInput`) — and appends the
 * model-error marker. Nothing the user said is lost.
 */
export function failTurn(ops: TurnOps, turnId: string, error: unknown, userInput: readonly Message[] = []): string {
  const turn = pendingTurn(ops, turnId);
  ops.q
    .prepare("DELETE FROM messages WHERE thread_id = ? AND seq > ? AND turn_id = ? AND role != 'user'")
    .run(turn.thread_id, turn.start_seq, turn.id);
  const missing = userInput.filter((m) => m.role === "user" && !ops.q.messageRow(m.id));
  if (missing.length > 0) ops.q.append(turn.thread_id, missing, turn.id);
  ops.q.append(turn.thread_id, [assistantMarker(MODEL_ERROR_MARKER, { error: true })], turn.id);
  closeTurn(ops, turn, "failed", { stopReason: "error", error: errorMessage(error) });
  return turn.session_key;
}

/** Keeps completed work (from `checkpoint` or the last saved one); pending calls get an error result. */
export function stopTurn(ops: TurnOps, turnId: string, checkpoint?: Checkpoint): string {
  const turn = pendingTurn(ops, turnId);
  const rows = checkpoint ? syncTurnRows(ops, turn, checkpointMessages(checkpoint)) : turnMessages(ops, turn);
  closeOpenCalls(ops, turn, rows, TOOL_INTERRUPTED);
  closeTurn(ops, turn, "stopped", { stopReason: "aborted" });
  return turn.session_key;
}

/** Closes turns a crashed process left `pending`, so the next request sees a legal history. */
export function recoverDanglingTurns(ops: TurnOps, sessionKey: string): number {
  const pending = ops.q
    .prepare<[string], TurnRow>("SELECT * FROM turns WHERE session_key = ? AND status = 'pending' ORDER BY started_at")
    .all(sessionKey);
  for (const turn of pending) {
    const rows = turnMessages(ops, turn);
    const added = closeOpenCalls(ops, turn, rows, TURN_INTERRUPTED);
    const last = added.at(-1) ?? rows.at(-1);
    if (!last || last.role !== "assistant") {
      ops.q.append(turn.thread_id, [assistantMarker(TURN_INTERRUPTED, { interrupted: true })], turn.id);
    }
    closeTurn(ops, turn, "failed", { stopReason: "error", error: "interrupted: the process ended before the turn finished" });
  }
  if (pending.length > 0) ops.q.touchSession(sessionKey);
  return pending.length;
}

/**
 * Reopens the turn of `userMessageId` that a process which died mid-turn left (closed by
 * recovery as interrupted), as `planReopen` decides: a new pending turn answers the same stored
 * message, which is not stored again.
 */
export function reopenInterruptedTurn(ops: TurnOps, sessionKey: string, userMessageId: string): TurnHandle {
  const recoveredTurns = recoverDanglingTurns(ops, sessionKey);
  const { q, now } = ops;
  const thread = q.currentThread(sessionKey);
  const message = q.messageRow(userMessageId);
  const later = message && message.thread_id === thread.id ? q.rowsFrom(thread.id, message.seq + 1) : [];
  const turns = attemptTurnIds(message, later).flatMap((id) => q.turn(id) ?? []);
  const plan = planReopen({ sessionKey, userMessageId, message, currentThreadId: thread.id, later, turns });
  if (plan.dropRowId !== undefined) q.prepare("DELETE FROM messages WHERE id = ?").run(plan.dropRowId);
  const id = newTurnId();
  q
    .prepare(
      `INSERT INTO turns (id, session_key, thread_id, status, user_message_id, start_seq, started_at)
       VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
    )
    .run(id, sessionKey, thread.id, userMessageId, plan.startSeq, now());
  return { turnId: id, sessionKey, threadId: thread.id, userMessageId, recoveredTurns };
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────

function pendingTurn(ops: TurnOps, turnId: string): TurnRow {
  const turn = ops.q.requireTurn(turnId);
  if (turn.status !== "pending") throw new SessionStoreError(`turn ${turnId} is already ${turn.status}`);
  return turn;
}

/** Every message a checkpoint knows about, in order, each once. */
export function checkpointMessages(checkpoint: Checkpoint): Message[] {
  const out: Message[] = [...checkpoint.newMessages];
  const seen = new Set(out.map((m) => m.id));
  for (const extra of [checkpoint.assistant, ...(checkpoint.completedResults ?? [])]) {
    if (extra && !seen.has(extra.id)) {
      seen.add(extra.id);
      out.push(extra);
    }
  }
  return out;
}

/** The turn's stored messages after its user message, oldest first. */
function turnMessages(ops: TurnOps, turn: TurnRow): Message[] {
  return ops.q.rowsFromTurn(turn).map(rowToMessage);
}

/**
 * Makes the turn's stored rows equal `desired` (sanitized) by keeping the common prefix (by
 * id) and rewriting only what differs — with the engine's append-only checkpoints that means
 * inserting just the new messages. Returns the turn's messages after the sync.
 */
function syncTurnRows(ops: TurnOps, turn: TurnRow, desired: readonly Message[]): Message[] {
  const own = desired.filter((m) => m.id !== turn.user_message_id);
  const { kept, dropped } = sanitizeToolResults(own);
  if (dropped.length) ops.onDropped?.(turn.id, dropped.length);
  const existing = ops.q.turnRowIds(turn);
  let prefix = 0;
  while (prefix < existing.length && prefix < kept.length && existing[prefix] === kept[prefix]!.id) prefix++;
  if (prefix < existing.length) {
    const del = ops.q.prepare("DELETE FROM messages WHERE id = ?");
    for (const id of existing.slice(prefix)) del.run(id);
  }
  ops.q.append(turn.thread_id, kept.slice(prefix), turn.id);
  return kept;
}

/** Appends error results for the trailing block's unanswered calls; returns what was added. */
function closeOpenCalls(ops: TurnOps, turn: TurnRow, rows: readonly Message[], text: string): Message[] {
  const open = unansweredToolCalls(rows);
  if (!open.length) return [];
  const results = interruptedResults(open, text);
  ops.q.append(turn.thread_id, results, turn.id);
  return results;
}

function closeTurn(
  ops: TurnOps,
  turn: TurnRow,
  status: "completed" | "failed" | "stopped",
  details: { stopReason: string; error?: string; usage?: RunResult["usage"]; extraTimings?: Record<string, unknown> },
): void {
  const ended = ops.now();
  // The turn's checkpoint row goes with it; its count stays in the turn's timings.
  const checkpoints = ops.q
    .prepare<[string], { count: number }>("DELETE FROM checkpoints WHERE turn_id = ? RETURNING count")
    .get(turn.id);
  const timings = { durationMs: ended - turn.started_at, checkpoints: checkpoints?.count ?? 0, ...details.extraTimings };
  ops.q
    .prepare("UPDATE turns SET status = ?, stop_reason = ?, ended_at = ?, timings = ?, usage = ?, error = ? WHERE id = ?")
    .run(
      status,
      details.stopReason,
      ended,
      JSON.stringify(timings),
      details.usage ? JSON.stringify(details.usage) : null,
      details.error ?? null,
      turn.id,
    );
  // The thread shows activity once per turn, at its end (a turn in progress is known by its
  // pending row): touching it when the turn begins too would write another page. The session is
  // touched by whoever closes the turn, in the same transaction: the store, with the closing's
  // metadata patch when there is one (one UPDATE of the row), or recovery.
  ops.q.touchThread(turn.thread_id);
}
