/**
 * Export and import of a session as JSONL in the Python nanobot's format. Export writes the
 * current (or a given) thread; import writes the file into a fresh current thread, archiving
 * whatever the session had, so importing never destroys history.
 */
import { isoTimestamp, messageToPy, parseTimestamp, pyToMessage } from "./jsonl-format.js";
import type { PyMessageLine, PyMetadataLine } from "./jsonl-format.js";
import type { ImportResult, PortableSessionStore } from "./records.js";
import { rowToMessage } from "./rows.js";
import { SessionStoreError } from "./types.js";

export type { ImportResult } from "./records.js";

/** The session's thread as JSONL lines (metadata first), each without a trailing newline. */
export async function exportSessionLines(
  store: PortableSessionStore,
  key: string,
  options: { threadId?: string } = {},
): Promise<string[]> {
  const { session, thread, rows } = await store.exportThread(key, options.threadId);
  const metadata: PyMetadataLine = {
    _type: "metadata",
    key,
    created_at: isoTimestamp(session.created_at),
    updated_at: isoTimestamp(session.updated_at),
    metadata: JSON.parse(session.metadata) as Record<string, unknown>,
    last_consolidated: rows.filter((r) => r.seq < thread.replay_seq).length,
  };
  return [JSON.stringify(metadata), ...rows.map((row) => JSON.stringify(messageToPy(rowToMessage(row))))];
}

export async function exportSessionJsonl(store: PortableSessionStore, key: string, options: { threadId?: string } = {}): Promise<string> {
  return `${(await exportSessionLines(store, key, options)).join("\n")}\n`;
}

/**
 * Imports a Python-format JSONL session. `key` overrides the key in the metadata line (and is
 * required when the file has none). Messages are stored as they are, without repair: the file
 * is an archive, and the engine's governance makes any history legal before a model sees it.
 */
export async function importSessionJsonl(
  store: PortableSessionStore,
  text: string,
  options: { key?: string } = {},
): Promise<ImportResult> {
  const { metadata, messages } = parseSessionJsonl(text);
  const key = options.key ?? metadata?.key;
  if (!key) throw new SessionStoreError("the file has no metadata line with a key; pass a key");
  const converted = messages.map((line, i) => {
    try {
      return pyToMessage(line);
    } catch (error) {
      throw new SessionStoreError(`message ${i + 1}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  const consolidated = Math.min(Math.max(0, Math.floor(metadata?.last_consolidated ?? 0)), converted.length);
  return store.importThread({
    key,
    messages: converted,
    consolidated,
    metadata: metadata
      ? { values: metadata.metadata, createdAt: parseTimestamp(metadata.created_at), updatedAt: parseTimestamp(metadata.updated_at) }
      : undefined,
  });
}

/** Splits a JSONL text into its metadata line (if any) and message lines; names bad lines. */
export function parseSessionJsonl(text: string): { metadata: PyMetadataLine | null; messages: PyMessageLine[] } {
  let metadata: PyMetadataLine | null = null;
  const messages: PyMessageLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new SessionStoreError(`line ${i + 1}: not JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new SessionStoreError(`line ${i + 1}: expected a JSON object`);
    }
    const record = value as Record<string, unknown>;
    if (record["_type"] === "metadata") {
      metadata = {
        _type: "metadata",
        key: typeof record["key"] === "string" ? record["key"] : "",
        created_at: typeof record["created_at"] === "string" ? record["created_at"] : "",
        updated_at: typeof record["updated_at"] === "string" ? record["updated_at"] : "",
        metadata: typeof record["metadata"] === "object" && record["metadata"] !== null ? (record["metadata"] as Record<string, unknown>) : {},
        last_consolidated: typeof record["last_consolidated"] === "number" ? record["last_consolidated"] : 0,
      };
      return;
    }
    if (!["system", "user", "assistant", "tool"].includes(String(record["role"]))) {
      throw new SessionStoreError(`line ${i + 1}: unknown role ${JSON.stringify(record["role"])}`);
    }
    messages.push(record as PyMessageLine);
  });
  return { metadata, messages };
}
