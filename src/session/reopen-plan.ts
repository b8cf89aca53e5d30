/**
 * Whether the turn of a stored user message can be reopened after its process died, decided
 * from rows the store has read: one rule for the SQLite and the PostgreSQL stores, which differ
 * only in how they read and write. The turn must have been closed by recovery as interrupted,
 * and nothing may have come after the message in the current thread but the turns answering it
 * (the first attempt and each reopening). A reopened turn keeps what the dead one completed (tool
 * calls and their results); only its trailing interruption marker goes.
 */
import { textOf } from "../core/index.js";
import { TURN_INTERRUPTED } from "./repair.js";
import { rowToMessage } from "./rows.js";
import type { MessageRow } from "./rows.js";
import type { TurnRow } from "./sqlite-queries.js";
import { MessageNotStoredError, TurnAlreadyAnsweredError, TurnNotResumableError } from "./types.js";

export interface ReopenInput {
  sessionKey: string;
  userMessageId: string;
  /** The message's row, undefined when it was never stored. */
  message: MessageRow | undefined;
  currentThreadId: string;
  /** The rows after the message in its thread, oldest first (empty when it is not in the current thread). */
  later: readonly MessageRow[];
  /** The turns named by `attemptTurnIds`. */
  turns: readonly TurnRow[];
}

export interface ReopenPlan {
  /** The dead turn's trailing interruption marker, to delete. */
  dropRowId?: string;
  /** Where the new turn's own rows start (its `start_seq`). */
  startSeq: number;
}

/** The turns that may have answered the message: the message's own and those of the rows after it. */
export function attemptTurnIds(message: MessageRow | undefined, later: readonly MessageRow[]): string[] {
  if (!message) return [];
  return [...new Set([message.turn_id, ...later.map((row) => row.turn_id)].filter((id): id is string => id !== null))];
}

/** The reopening to do, or throws `TurnNotResumableError` (or one of its kinds) saying why not. */
export function planReopen(input: ReopenInput): ReopenPlan {
  const { sessionKey, userMessageId, message, later } = input;
  if (!message) throw new MessageNotStoredError(`message ${userMessageId} of ${sessionKey} was never stored`);
  const notInterrupted = () => new TurnNotResumableError(`message ${userMessageId} of ${sessionKey} is not the start of an interrupted turn`);
  if (message.thread_id !== input.currentThreadId) throw notInterrupted();
  // Every attempt at answering the message, latest first.
  const attempts = input.turns
    .filter((t) => t.user_message_id === userMessageId)
    .sort((a, b) => b.started_at - a.started_at || (a.id < b.id ? 1 : -1));
  const own = new Set(attempts.map((t) => t.id));
  const dead = attempts[0];
  const wentOn = later.some((row) => row.turn_id === null || !own.has(row.turn_id));
  if (dead?.status === "completed" && !wentOn) {
    // Answered, and nothing after it but its own turns' messages: the caller gets that answer.
    const answer = later.map(rowToMessage).filter((m) => m.role === "assistant" && textOf(m.content).trim() !== "").at(-1);
    if (answer) throw new TurnAlreadyAnsweredError(`message ${userMessageId} of ${sessionKey} was answered already`, dead.id, textOf(answer.content));
  }
  if (!dead || dead.status !== "failed" || !dead.error?.startsWith("interrupted")) throw notInterrupted();
  if (wentOn) throw new TurnNotResumableError(`the conversation in ${sessionKey} went on after the interrupted turn of message ${userMessageId}`);
  const last = later.at(-1);
  const lastMessage = last === undefined ? undefined : rowToMessage(last);
  const marker = last !== undefined && lastMessage?.role === "assistant" && textOf(lastMessage.content) === TURN_INTERRUPTED;
  const kept = marker ? later.slice(0, -1) : later;
  return { ...(marker ? { dropRowId: last.id } : {}), startSeq: kept.at(-1)?.seq ?? message.seq };
}
