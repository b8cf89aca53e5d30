/**
 * The IMAP high-water mark: the highest UID the channel has handled in the watched mailbox,
 * with the UIDVALIDITY it belongs to. Persisted so a restart never hands the agent the same
 * mail twice, even when `markSeen` is off or flagging failed. A changed UIDVALIDITY means the
 * server renumbered the mailbox, and the old mark says nothing any more.
 */
import { join } from "node:path";
import { readJsonFile, writeJsonFileAtomic } from "../json-file.js";

export interface ImapMark {
  uidValidity: string;
  lastUid: number;
}

export function imapStatePath(home: string, channel: string): string {
  return join(home, "channels", channel, "imap-state.json");
}

/** The mark for `mailbox`, or undefined when none was saved (or the file is unreadable). */
export async function readImapMark(path: string, mailbox: string): Promise<ImapMark | undefined> {
  let raw: unknown;
  try {
    raw = await readJsonFile(path);
  } catch {
    return undefined;
  }
  const entry = isRecord(raw) && isRecord(raw.mailboxes) ? raw.mailboxes[mailbox] : undefined;
  if (!isRecord(entry) || typeof entry.uidValidity !== "string" || typeof entry.lastUid !== "number") return undefined;
  return { uidValidity: entry.uidValidity, lastUid: entry.lastUid };
}

export async function writeImapMark(path: string, mailbox: string, mark: ImapMark): Promise<void> {
  let raw: unknown;
  try {
    raw = await readJsonFile(path);
  } catch {
    raw = undefined;
  }
  const mailboxes = isRecord(raw) && isRecord(raw.mailboxes) ? raw.mailboxes : {};
  await writeJsonFileAtomic(path, { version: 1, mailboxes: { ...mailboxes, [mailbox]: mark } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
