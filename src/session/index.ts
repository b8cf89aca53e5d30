/** Sessions and threads: the `SessionStore` seam, its SQLite implementation, keys, JSONL import/export. */
export type {
  ConsolidationPoint,
  Leadership,
  LoadHistoryOptions,
  SessionInfo,
  SessionLease,
  SessionStore,
  Singletons,
  ThreadInfo,
  ThreadStatus,
  TurnHandle,
  TurnInfo,
  TurnStatus,
} from "./types.js";
export { MessageNotStoredError, SessionStoreError, TurnAlreadyAnsweredError, TurnNotResumableError } from "./types.js";
export { SqliteSessionStore } from "./sqlite-store.js";
export type { SqliteSessionStoreOptions } from "./sqlite-store.js";
export type { RetryPolicy } from "./sqlite-db.js";
export { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
export type { Migration } from "./schema.js";
export {
  DEFAULT_API_SESSION_KEY,
  DEFAULT_CLI_SESSION_KEY,
  UNIFIED_SESSION_KEY,
  apiSessionKey,
  isValidSessionKey,
  parseSessionKey,
  sessionKeyFor,
} from "./keys.js";
export type { SessionKeyInput } from "./keys.js";
export {
  MODEL_ERROR_MARKER,
  TOOL_INTERRUPTED,
  TURN_INTERRUPTED,
  historyProblems,
  sanitizeToolResults,
  unansweredToolCalls,
} from "./repair.js";
export { roughTokenEstimate, trimToBudget } from "./history.js";
export { exportSessionJsonl, exportSessionLines, importSessionJsonl, parseSessionJsonl } from "./jsonl.js";
export type { ImportResult } from "./records.js";
export type { PyMessageLine, PyMetadataLine } from "./jsonl-format.js";
export { PgSessionStore } from "./pg-store.js";
export type { PgSessionStoreOptions } from "./pg-store.js";
export { PG_MIGRATIONS, PG_SCHEMA_VERSION } from "./pg-schema.js";
export type { CheckpointRow, ImportThreadInput, PortableSessionStore, SessionRecords, ThreadExport } from "./records.js";
export { describeLocation, openSessionStore, parseStoreLocation, storeLocation } from "./open-store.js";
export type { StoreLocation } from "./open-store.js";
export { copyStore } from "./copy.js";
export type { CopyResult } from "./copy.js";
