/**
 * The persistence seam for conversations. The agent layer talks only to `SessionStore`; the
 * default implementation is SQLite (`SqliteSessionStore`), and every method is async so a
 * networked store (Postgres, …) can implement the same surface later.
 */
import type { ClusterRelay } from "../cluster/cluster-relay.js";
import { NanobotError } from "../core/index.js";
import type { Checkpoint, Message, RunResult, StopReason, ToolMessage, Usage, UserMessage } from "../core/index.js";

export type TurnStatus = "pending" | "completed" | "failed" | "stopped";
export type ThreadStatus = "active" | "archived";

export interface SessionInfo {
  key: string;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
  metadata: Record<string, unknown>;
  currentThreadId: string;
  /** Messages in the current thread. */
  messageCount: number;
}

export interface ThreadInfo {
  id: string;
  sessionKey: string;
  /** Set for named threads; `null` for the default/archived ones. */
  name: string | null;
  /** A short title from the thread's first user message (`null` until it has one). */
  title: string | null;
  status: ThreadStatus;
  /** True for the thread new turns go to. */
  current: boolean;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
}

/**
 * A worker's hold on one session across a cluster of workers sharing a store (PostgreSQL): while
 * held, no other worker runs a turn of that session. Release it when the turn is closed.
 */
export interface SessionLease {
  readonly sessionKey: string;
  /** Aborted when the lease was lost (the worker's lock connection broke): stop the turn. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** What only one worker of a cluster runs at a time (cron with heartbeat and Dream, chat pollers). */
export interface Singletons {
  /** Starts them for a leadership term; `term` aborts when it ends. */
  start(term: AbortSignal): Promise<void>;
  /** Stops them (awaited before leadership passes on cleanly). */
  stop(): Promise<void>;
}

/** One worker's part in electing the cluster's leader, which runs the singletons. */
export interface Leadership {
  readonly leading: boolean;
  /** Campaigns until `stop()`; resolves after the first try (and the singletons' start when it won). */
  start(singletons: Singletons): Promise<void>;
  stop(): Promise<void>;
}

/** What `beginTurn` returns; pass `turnId` to the other turn methods. */
export interface TurnHandle {
  turnId: string;
  sessionKey: string;
  threadId: string;
  userMessageId: string;
  /** How many dangling turns of this session were closed before this one began. */
  recoveredTurns: number;
}

export interface TurnInfo {
  id: string;
  sessionKey: string;
  threadId: string;
  status: TurnStatus;
  stopReason: StopReason | null;
  startedAt: number;
  endedAt: number | null;
  error: string | null;
  usage: Usage | null;
}

export interface LoadHistoryOptions {
  /** Keep the newest messages that fit, cut so the history starts at a user message. */
  tokenBudget?: number;
  /** Token estimate of one message (default: serialized length / 4). */
  estimate?: (message: Message) => number;
  /**
   * About how many messages the budget will take (the turn's message cap): a hint a store sizes
   * its first read of the window by, so a replay that fits it reads it in one round trip. The
   * budget still decides.
   */
  expectedMessages?: number;
  /** Read this thread instead of the current one (e.g. an archived thread). */
  threadId?: string;
}

export interface ConsolidationPoint {
  /** History replays from this message on (it stays readable either way). */
  fromMessageId: string;
  /** A summary of what came before, prepended to the replayed history; appended to the thread. */
  summary?: Message;
}

/** Written in the same transaction as a turn's closing. */
export interface CloseTurnOptions {
  /** Session metadata keys to set (`undefined` deletes), e.g. the running usage totals. */
  metadata?: Record<string, unknown>;
}

/**
 * Conversation storage: sessions (`channel:chatId`) own threads, threads own an append-only
 * list of messages, and turns group the messages one user input produced.
 *
 * Turn lifecycle: `beginTurn` (user message + pending turn, before the LLM call) →
 * `saveCheckpoint`* → exactly one of `completeTurn` / `failTurn` / `stopTurn`. A turn still
 * pending at the next `beginTurn` (process crash) is closed first so history stays legal.
 */
/** A metadata patch, or one computed from the metadata as it is (inside the store's write). */
export type MetadataPatch = Record<string, unknown> | ((metadata: Record<string, unknown>) => Record<string, unknown>);

export interface SessionStore {
  // sessions
  getSession(key: string): Promise<SessionInfo | null>;
  /** The session's metadata alone, or null when there is no such session (cheaper than getSession: no message count). */
  sessionMetadata(key: string): Promise<Record<string, unknown> | null>;
  /** Creates the session (with an empty current thread) if it does not exist. */
  ensureSession(key: string, metadata?: Record<string, unknown>): Promise<SessionInfo>;
  listSessions(): Promise<SessionInfo[]>;
  /** Shallow-merges `patch` into the session metadata; `undefined` values delete keys. */
  updateMetadata(key: string, patch: Record<string, unknown>): Promise<void>;
  /**
   * Replaces one metadata field with `next(current)` with no other writer of the session in
   * between (read-modify-write that two workers cannot interleave); `next` runs synchronously
   * and may run again when a store retries its transaction (keep it pure); returning
   * `undefined` deletes the field. Creates the session if needed; resolves to what
   * `next` returned.
   */
  mutateMetadata(key: string, field: string, next: (current: unknown) => unknown): Promise<unknown>;
  deleteSession(key: string): Promise<boolean>;

  // history
  /**
   * The model-facing history of the current thread, from the last consolidation point (summary
   * first when there is one). Pass `tokenBudget`: the read then stops at the budget and costs
   * the same at any session length; without it the whole replayable thread is read.
   */
  loadHistory(sessionKey: string, options?: LoadHistoryOptions): Promise<Message[]>;
  /** Every message of a thread (current by default), ignoring consolidation. */
  loadMessages(sessionKey: string, options?: { threadId?: string }): Promise<Message[]>;
  /** Appends messages outside a turn (slash-command output, notices); tool results are sanitized. */
  appendMessages(sessionKey: string, messages: Message[]): Promise<void>;
  /** Moves the replay point of the current thread (compaction / consolidation). */
  markConsolidated(sessionKey: string, point: ConsolidationPoint): Promise<void>;

  // turns
  beginTurn(sessionKey: string, userMessage: UserMessage): Promise<TurnHandle>;
  /**
   * Begins a turn that continues a run stopped for external tools, opened by the caller's results
   * (no user message). Returns the messages stored: the results, plus an error result for each
   * open call the caller did not answer. Throws `SessionStoreError` when a result answers no open call.
   */
  resumeTurn(sessionKey: string, results: readonly ToolMessage[]): Promise<{ handle: TurnHandle; messages: Message[] }>;
  saveCheckpoint(turnId: string, checkpoint: Checkpoint): Promise<void>;
  completeTurn(turnId: string, result: RunResult, options?: CloseTurnOptions): Promise<void>;
  failTurn(turnId: string, error: unknown, options?: CloseTurnOptions): Promise<void>;
  stopTurn(turnId: string, checkpoint?: Checkpoint, options?: CloseTurnOptions): Promise<void>;
  /** Closes turns of the session left `pending` by a crashed process; returns how many. */
  recoverDanglingTurns(sessionKey: string): Promise<number>;
  getTurn(turnId: string): Promise<TurnInfo | null>;
  /**
   * Waits for the session's cluster-wide lease (stores several processes share; a single-process
   * store leaves this out). Take it before reading the history of a turn, hold it to the turn's close.
   */
  leaseSession?(sessionKey: string, signal?: AbortSignal): Promise<SessionLease>;
  /**
   * Reopens the turn of a stored user message that a dead worker left interrupted, keeping what
   * it completed; the new pending turn answers that message (both stores: the rule is
   * reopen-plan.ts). Throws
   * `TurnNotResumableError` when the turn was not interrupted or the thread went on after it.
   */
  reopenInterruptedTurn?(sessionKey: string, userMessageId: string): Promise<TurnHandle>;
  /** This process's id among the workers sharing the store (held alive until close). */
  workerId?(): Promise<string>;
  /** Whether the worker `id` is still running. */
  workerAlive?(id: string): Promise<boolean>;
  /**
   * Records a platform's delivery id (a webhook event id, `<channel>:<id>`): true the first time
   * any worker sharing the store records it, false for a repeat (shared stores only).
   */
  claimDelivery?(key: string): Promise<boolean>;
  /** Leader election for the singletons of `group` among the workers sharing this store (shared stores only). */
  leadership?(group: string): Leadership;
  /** A new relay of events between the workers sharing this store (shared stores only; the caller starts and closes it). */
  eventRelay?(): ClusterRelay;

  // threads
  listThreads(sessionKey: string): Promise<ThreadInfo[]>;
  /** Archives the current thread (still readable) and makes a new empty one current. */
  newThread(sessionKey: string): Promise<ThreadInfo>;
  /** Opens (creating if needed) the thread with this name and makes it current. */
  openThread(sessionKey: string, name: string): Promise<ThreadInfo>;
  /** Makes an existing thread (named, default or archived) current again. */
  switchThread(sessionKey: string, threadId: string): Promise<ThreadInfo>;
  renameThread(threadId: string, name: string | null): Promise<ThreadInfo>;
  /** Deletes a thread and its messages; deleting the current one starts a fresh current thread. */
  deleteThread(threadId: string): Promise<boolean>;

  close(): Promise<void>;
}

/** Thrown for calls that name something that does not exist or is in the wrong state. */
export class SessionStoreError extends NanobotError {
  override readonly code: string = "session_store_error";
}

/** A caller's tool result answers no call open in the session (a resumed external-tool turn). */
export class UnmatchedToolResultError extends SessionStoreError {
  override readonly code = "unmatched_tool_result";
}

/** The turn a caller asked to resume cannot be (it was not interrupted, or the conversation went on). */
export class TurnNotResumableError extends SessionStoreError {
  override readonly code: string = "turn_not_resumable";
}

/**
 * The message of the turn a caller asked to resume was never stored (its worker died, or the
 * store failed, before the turn began): there is nothing to resume, and the message may be
 * stored now, once, with the id the first attempt chose.
 */
export class MessageNotStoredError extends TurnNotResumableError {
  override readonly code: string = "message_not_stored";
}

/**
 * The turn a caller asked to resume was not interrupted: it completed (its worker died, or lost
 * the store, after saving the answer but before the caller heard it). `answer` is that answer.
 */
export class TurnAlreadyAnsweredError extends TurnNotResumableError {
  override readonly code: string = "turn_already_answered";
  constructor(
    message: string,
    readonly turnId: string,
    readonly answer: string,
  ) {
    super(message);
  }
}
