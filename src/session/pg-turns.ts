/**
 * The turn lifecycle over PostgreSQL: the steps of sqlite-turns.ts, awaited, each run by the
 * store inside one SERIALIZABLE transaction. Same rules (repair.ts), same rows, same results.
 */
import { errorMessage, turnId as newTurnId } from "../core/index.js";
import type { Checkpoint, Message, RunResult, ToolMessage, UserMessage } from "../core/index.js";
import type { PgQueries } from "./pg-queries.js";
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
import type { TurnRow } from "./sqlite-queries.js";
import { EXTERNAL_RESULT_MISSING, checkpointMessages } from "./sqlite-turns.js";
import { titleFromMessage } from "./title.js";
import { SessionStoreError, UnmatchedToolResultError } from "./types.js";
import type { TurnHandle } from "./types.js";

export interface PgTurnOps {
  q: PgQueries;
  onDropped?: (turnId: string, count: number) => void;
}

export async function beginTurn(ops: PgTurnOps, sessionKey: string, userMessage: UserMessage): Promise<TurnHandle> {
  const recoveredTurns = await recoverDanglingTurns(ops, sessionKey);
  const { q } = ops;
  const thread = await q.currentThread(sessionKey);
  const id = newTurnId();
  const seq = await q.append(thread.id, [userMessage], id);
  await q.run(
    `INSERT INTO turns (id, session_key, thread_id, status, user_message_id, start_seq, started_at)
     VALUES ($1, $2, $3, 'pending', $4, $5, $6)`,
    [id, sessionKey, thread.id, userMessage.id, seq, q.now()],
  );
  if (thread.title === null) await giveTitle(q, sessionKey, thread.id, userMessage);
  return { turnId: id, sessionKey, threadId: thread.id, userMessageId: userMessage.id, recoveredTurns };
}

/**
 * A turn that continues a run stopped for external tools: the caller's results open it in place
 * of a user message (the rules of sqlite-turns.ts `beginResumedTurn`).
 */
export async function beginResumedTurn(ops: PgTurnOps, sessionKey: string, results: readonly ToolMessage[]): Promise<{ handle: TurnHandle; messages: Message[] }> {
  const recoveredTurns = await recoverDanglingTurns(ops, sessionKey);
  const { q } = ops;
  const thread = await q.currentThread(sessionKey);
  const open = await q.openCallsAtTail(thread.id);
  const { kept, dropped } = sanitizeToolResults(results, open.map((c) => c.id));
  if (kept.length === 0 || dropped.length > 0) {
    const stray = (dropped.length > 0 ? dropped : results).map((r) => r.toolCallId).join(", ") || "(none)";
    throw new UnmatchedToolResultError(`no open tool call in ${sessionKey} for result ${stray} (open: ${open.map((c) => c.id).join(", ") || "none"})`);
  }
  const names = new Map(open.map((c) => [c.id, c.name]));
  const answers = (kept as ToolMessage[]).map((m): ToolMessage => ({ ...m, toolName: names.get(m.toolCallId) ?? m.toolName }));
  const answered = new Set(answers.map((m) => m.toolCallId));
  const messages: Message[] = [...answers, ...interruptedResults(open.filter((c) => !answered.has(c.id)), EXTERNAL_RESULT_MISSING)];
  const id = newTurnId();
  const anchor = messages.at(-1)!;
  const seq = (await q.append(thread.id, messages, id)) + messages.length - 1;
  await q.run(
    `INSERT INTO turns (id, session_key, thread_id, status, user_message_id, start_seq, started_at)
     VALUES ($1, $2, $3, 'pending', $4, $5, $6)`,
    [id, sessionKey, thread.id, anchor.id, seq, q.now()],
  );
  return { handle: { turnId: id, sessionKey, threadId: thread.id, userMessageId: anchor.id, recoveredTurns }, messages };
}

/** The thread's first turn titles it; the session keeps the title of its first titled thread. */
async function giveTitle(q: PgQueries, sessionKey: string, threadId: string, userMessage: UserMessage): Promise<void> {
  const title = titleFromMessage(userMessage);
  if (!title) return;
  await q.run("UPDATE threads SET title = $1 WHERE id = $2 AND title IS NULL", [title, threadId]);
  const session = await q.requireSession(sessionKey);
  const metadata = JSON.parse(session.metadata) as Record<string, unknown>;
  if (typeof metadata.title === "string" && metadata.title !== "") return;
  await q.run("UPDATE sessions SET metadata = $1 WHERE key = $2", [JSON.stringify({ ...metadata, title }), sessionKey]);
}

export async function saveCheckpoint(ops: PgTurnOps, turnId: string, checkpoint: Checkpoint): Promise<void> {
  const turn = await pendingTurn(ops, turnId);
  await syncTurnRows(ops, turn, checkpointMessages(checkpoint));
  await ops.q.run(
    `INSERT INTO checkpoints (turn_id, phase, iteration, pending_tool_calls, count, updated_at)
     VALUES ($1, $2, $3, $4, 1, $5)
     ON CONFLICT (turn_id) DO UPDATE SET phase = EXCLUDED.phase, iteration = EXCLUDED.iteration,
       pending_tool_calls = EXCLUDED.pending_tool_calls, count = checkpoints.count + 1, updated_at = EXCLUDED.updated_at`,
    [turnId, checkpoint.phase, checkpoint.iteration, JSON.stringify(checkpoint.pendingToolCalls ?? []), ops.q.now()],
  );
}

/** Commits the run's messages; an `error` result is a failure, an `aborted` one a stop. Returns the turn's session key. */
export async function completeTurn(ops: PgTurnOps, turnId: string, result: RunResult): Promise<string> {
  if (result.stopReason === "error") {
    const userInput = result.newMessages.filter((m) => m.role === "user" && m.meta?.["synthetic"] !== true && m.meta?.["compactionSummary"] !== true);
    return failTurn(ops, turnId, result.error ?? "run ended with an error", userInput);
  }
  const turn = await pendingTurn(ops, turnId);
  const rows = await syncTurnRows(ops, turn, result.newMessages);
  if (result.stopReason !== "external_tool") await closeOpenCalls(ops, turn, rows, TOOL_INTERRUPTED);
  const summary = [...rows].reverse().find((m) => m.meta?.["summary"] === true);
  if (summary) {
    const row = (await ops.q.messageRow(summary.id))!;
    await ops.q.run("UPDATE threads SET replay_seq = $1, summary_seq = $2 WHERE id = $3", [turn.start_seq, row.seq, turn.thread_id]);
  }
  const status = result.stopReason === "aborted" ? "stopped" : "completed";
  await closeTurn(ops, turn, status, {
    stopReason: result.stopReason,
    usage: result.usage,
    extraTimings: { iterations: result.iterations, toolsUsed: result.toolsUsed },
  });
  return turn.session_key;
}

/** Rolls the turn back to what the user said (its input and injected user messages) plus the model-error marker. */
export async function failTurn(ops: PgTurnOps, turnId: string, error: unknown, userInput: readonly Message[] = []): Promise<string> {
  const { q } = ops;
  const turn = await pendingTurn(ops, turnId);
  await q.run("DELETE FROM messages WHERE turn_id = $1 AND seq > $2 AND role <> 'user'", [turn.id, turn.start_seq]);
  const missing: Message[] = [];
  for (const m of userInput) if (m.role === "user" && !(await q.messageRow(m.id))) missing.push(m);
  if (missing.length > 0) await q.append(turn.thread_id, missing, turn.id);
  await q.append(turn.thread_id, [assistantMarker(MODEL_ERROR_MARKER, { error: true })], turn.id);
  await closeTurn(ops, turn, "failed", { stopReason: "error", error: errorMessage(error) });
  return turn.session_key;
}

/** Keeps completed work (from `checkpoint` or the last saved one); pending calls get an error result. */
export async function stopTurn(ops: PgTurnOps, turnId: string, checkpoint?: Checkpoint): Promise<string> {
  const turn = await pendingTurn(ops, turnId);
  const rows = checkpoint ? await syncTurnRows(ops, turn, checkpointMessages(checkpoint)) : await turnMessages(ops, turn);
  await closeOpenCalls(ops, turn, rows, TOOL_INTERRUPTED);
  await closeTurn(ops, turn, "stopped", { stopReason: "aborted" });
  return turn.session_key;
}

/** Closes turns a crashed process left `pending`, so the next request sees a legal history. */
export async function recoverDanglingTurns(ops: PgTurnOps, sessionKey: string): Promise<number> {
  const pending = await ops.q.all<TurnRow>("SELECT * FROM turns WHERE session_key = $1 AND status = 'pending' ORDER BY started_at", [sessionKey]);
  for (const turn of pending) {
    const rows = await turnMessages(ops, turn);
    const added = await closeOpenCalls(ops, turn, rows, TURN_INTERRUPTED);
    const last = added.at(-1) ?? rows.at(-1);
    if (!last || last.role !== "assistant") {
      await ops.q.append(turn.thread_id, [assistantMarker(TURN_INTERRUPTED, { interrupted: true })], turn.id);
    }
    await closeTurn(ops, turn, "failed", { stopReason: "error", error: "interrupted: the process ended before the turn finished" });
  }
  if (pending.length > 0) await ops.q.touchSession(sessionKey);
  return pending.length;
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────

async function pendingTurn(ops: PgTurnOps, turnId: string): Promise<TurnRow> {
  const turn = await ops.q.requireTurn(turnId);
  if (turn.status !== "pending") throw new SessionStoreError(`turn ${turnId} is already ${turn.status}`);
  return turn;
}

async function turnMessages(ops: PgTurnOps, turn: TurnRow): Promise<Message[]> {
  return (await ops.q.rowsFromTurn(turn.id, turn.start_seq)).map(rowToMessage);
}

/** Makes the turn's stored rows equal `desired` (sanitized), rewriting only what differs from the common prefix. */
async function syncTurnRows(ops: PgTurnOps, turn: TurnRow, desired: readonly Message[]): Promise<Message[]> {
  const own = desired.filter((m) => m.id !== turn.user_message_id);
  const { kept, dropped } = sanitizeToolResults(own);
  if (dropped.length) ops.onDropped?.(turn.id, dropped.length);
  const existing = await ops.q.turnRowIds(turn.id, turn.start_seq);
  let prefix = 0;
  while (prefix < existing.length && prefix < kept.length && existing[prefix] === kept[prefix]!.id) prefix++;
  if (prefix < existing.length) await ops.q.run("DELETE FROM messages WHERE id = ANY($1)", [existing.slice(prefix)]);
  await ops.q.append(turn.thread_id, kept.slice(prefix), turn.id);
  return kept;
}

async function closeOpenCalls(ops: PgTurnOps, turn: TurnRow, rows: readonly Message[], text: string): Promise<Message[]> {
  const open = unansweredToolCalls(rows);
  if (!open.length) return [];
  const results = interruptedResults(open, text);
  await ops.q.append(turn.thread_id, results, turn.id);
  return results;
}

async function closeTurn(
  ops: PgTurnOps,
  turn: TurnRow,
  status: "completed" | "failed" | "stopped",
  details: { stopReason: string; error?: string; usage?: RunResult["usage"]; extraTimings?: Record<string, unknown> },
): Promise<void> {
  const { q } = ops;
  const ended = q.now();
  // The turn's checkpoint row goes with it (one round trip); its count stays in the turn's timings.
  const checkpoints = await q.one<{ count: number }>("DELETE FROM checkpoints WHERE turn_id = $1 RETURNING count", [turn.id]);
  const timings = { durationMs: ended - turn.started_at, checkpoints: checkpoints?.count ?? 0, ...details.extraTimings };
  await q.run(
    "UPDATE turns SET status = $1, stop_reason = $2, ended_at = $3, timings = $4, usage = $5, error = $6 WHERE id = $7",
    [status, details.stopReason, ended, JSON.stringify(timings), details.usage ? JSON.stringify(details.usage) : null, details.error ?? null, turn.id],
  );
  // The thread shows activity once per turn, at its end (a turn in progress is known by its
  // pending row), as in sqlite-turns.ts: fewer row versions per turn. The session is touched by
  // whoever closes the turn: the store, with the closing's metadata patch if any, or recovery.
  await q.touchThread(turn.thread_id);
}

/**
 * Reopens the turn of `userMessageId` that a dead worker left (closed by recovery as
 * interrupted), as `planReopen` decides: a new pending turn answers the same stored message,
 * which is not stored again.
 */
export async function reopenInterruptedTurn(ops: PgTurnOps, sessionKey: string, userMessageId: string): Promise<TurnHandle> {
  const recoveredTurns = await recoverDanglingTurns(ops, sessionKey);
  const { q } = ops;
  const thread = await q.currentThread(sessionKey);
  const message = await q.messageRow(userMessageId);
  const later = message && message.thread_id === thread.id ? await q.rowsFrom(thread.id, message.seq + 1) : [];
  const ids = attemptTurnIds(message, later);
  const turns = ids.length > 0 ? await q.all<TurnRow>("SELECT * FROM turns WHERE id = ANY($1)", [ids]) : [];
  const plan = planReopen({ sessionKey, userMessageId, message, currentThreadId: thread.id, later, turns });
  if (plan.dropRowId !== undefined) await q.run("DELETE FROM messages WHERE id = $1", [plan.dropRowId]);
  const id = newTurnId();
  await q.run(
    `INSERT INTO turns (id, session_key, thread_id, status, user_message_id, start_seq, started_at)
     VALUES ($1, $2, $3, 'pending', $4, $5, $6)`,
    [id, sessionKey, thread.id, userMessageId, plan.startSeq, q.now()],
  );
  return { turnId: id, sessionKey, threadId: thread.id, userMessageId, recoveredTurns };
}
