/**
 * The IMAP side of the email transport: one reused imapflow connection to the watched mailbox,
 * polled for unseen mail above the persisted high-water mark.
 *
 * - Connection reuse: the session stays open between polls. A command failing on a reused
 *   session (the server restarted, a NAT dropped it) is retried once on a fresh connection, so
 *   a broken session costs no poll. Failed connects back off exponentially (10 s … 10 min);
 *   while backing off a poll fails fast without touching the network.
 * - Every command runs under a deadline; a missed one tears the session down.
 * - Commands are serialised: imapflow allows one selected mailbox per session, and a poll and
 *   a `markSeen` interleaving would fight over it.
 */
import type * as ImapFlowNs from "imapflow";
import type { FetchMessageObject, ImapFlow, ImapFlowOptions, MailboxObject, SearchObject } from "imapflow";
import { AbortedError, errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { EmailConfig } from "./config.js";
import { readImapMark, writeImapMark } from "./imap-state.js";
import type { ImapMark } from "./imap-state.js";
import { MailTransportError, withDeadline } from "./mail-errors.js";
import { parseMail } from "./parse-mail.js";
import type { IncomingMail } from "./transport.js";

export interface ReconnectBackoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: ReconnectBackoff = { baseMs: 10_000, maxMs: 600_000 };

export interface ImapMailboxOptions {
  config: EmailConfig;
  /** `imap-state.json` holding the high-water mark. */
  statePath: string;
  /** Where attachments are saved. */
  mediaDir: string;
  logger: Logger;
  /** Deadline for connect and for each command. Default `config.timeoutSeconds`. */
  timeoutMs?: number;
  backoff?: ReconnectBackoff;
  /** Mails handed over per poll; the rest wait for the next one. Default 50. */
  maxPerPoll?: number;
  now?: () => number;
}

/** Runs one IMAP command under the deadline, tearing the session down when it is missed. */
type Command = <T>(what: string, work: Promise<T>) => Promise<T>;

type ImapFlowModule = typeof ImapFlowNs;

let imapflowPromise: Promise<ImapFlowModule> | undefined;

export class ImapMailbox {
  private readonly options: ImapMailboxOptions;
  private readonly config: EmailConfig;
  private readonly timeoutMs: number;
  private readonly backoff: ReconnectBackoff;
  private readonly now: () => number;
  private readonly log: Logger;
  private client: ImapFlow | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private failures = 0;
  private retryAt = 0;
  private mark: ImapMark | undefined;
  private markLoaded = false;
  /** UIDVALIDITY seen by the latest fetch: the UIDs handed out belong to it. */
  private uidValidity: string | undefined;
  /** UIDs mailparser could not read: skipped (and logged) once, not on every poll. */
  private readonly unreadable = new Set<string>();
  private closed = false;

  constructor(options: ImapMailboxOptions) {
    this.options = options;
    this.config = options.config;
    this.timeoutMs = options.timeoutMs ?? options.config.timeoutSeconds * 1000;
    this.backoff = options.backoff ?? DEFAULT_RECONNECT_BACKOFF;
    this.now = options.now ?? Date.now;
    this.log = options.logger;
  }

  /** Unseen mails above the high-water mark, oldest first. */
  fetchUnseen(signal?: AbortSignal): Promise<IncomingMail[]> {
    return this.exclusive(() => this.withClient((client, cmd) => this.fetchNew(client, cmd), signal));
  }

  markSeen(uid: string): Promise<void> {
    return this.exclusive(() =>
      this.withClient(async (client, cmd) => {
        const box = await this.select(client, cmd);
        // Renumbered since the fetch: this UID may now name another mail.
        if (box.uidValidity.toString() !== this.uidValidity) return;
        await cmd("store", client.messageFlagsAdd(uid, ["\\Seen"], { uid: true }));
      }),
    );
  }

  /** Raises the persisted high-water mark to `uid` (no network). */
  markHandled(uid: string): Promise<void> {
    return this.exclusive(async () => {
      const n = Number(uid);
      if (this.uidValidity === undefined || !Number.isSafeInteger(n)) return;
      const mark = await this.loadMark();
      if (mark?.uidValidity === this.uidValidity && mark.lastUid >= n) return;
      this.mark = { uidValidity: this.uidValidity, lastUid: n };
      await writeImapMark(this.options.statePath, this.config.imapMailbox, this.mark);
    });
  }

  /** Logs out (briefly waiting for the server) and refuses further work. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await withDeadline(client.logout(), Math.min(this.timeoutMs, 5_000), "IMAP logout", { onGiveUp: () => client.close() });
    } catch {
      client.close();
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs `op` on the live session; a failure on a reused session gets one fresh-session retry. */
  private async withClient<T>(op: (client: ImapFlow, cmd: Command) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const reused = this.client?.usable === true;
    try {
      return await this.attempt(op, signal);
    } catch (error) {
      if (!reused || this.closed || signal?.aborted) throw error;
      this.log.info("IMAP session failed, reconnecting", { error: errorMessage(error) });
      return await this.attempt(op, signal);
    }
  }

  private async attempt<T>(op: (client: ImapFlow, cmd: Command) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const client = await this.connection(signal);
    const cmd: Command = (what, work) =>
      withDeadline(work, this.timeoutMs, `IMAP ${what}`, { onGiveUp: () => this.discard(client), signal });
    try {
      return await op(client, cmd);
    } catch (error) {
      // After a failed command the session state is unknown; the next call starts clean.
      this.discard(client);
      throw error;
    }
  }

  private async connection(signal?: AbortSignal): Promise<ImapFlow> {
    if (this.closed) throw new MailTransportError("the IMAP transport is closed", { retryable: false });
    if (this.client?.usable) return this.client;
    if (this.client) this.discard(this.client);
    const wait = this.retryAt - this.now();
    if (wait > 0) {
      throw new MailTransportError(`IMAP reconnect backing off, next attempt in ${Math.ceil(wait / 1000)} s`, { retryable: true, code: "EBACKOFF" });
    }
    const { ImapFlow } = await (imapflowPromise ??= import("imapflow"));
    const client = new ImapFlow(this.clientOptions());
    // imapflow emits 'error' for socket trouble; unhandled it would crash the process.
    client.on("error", (error: unknown) => this.log.debug("IMAP connection error", { error: errorMessage(error) }));
    client.on("close", () => {
      if (this.client === client) this.client = undefined;
    });
    try {
      await withDeadline(client.connect(), this.timeoutMs, "IMAP connect", { onGiveUp: () => client.close(), signal });
    } catch (error) {
      client.close();
      this.failures++;
      const delay = Math.min(this.backoff.baseMs * 2 ** (this.failures - 1), this.backoff.maxMs);
      this.retryAt = this.now() + delay;
      this.log.warn("IMAP connect failed", { host: this.config.imapHost, error: errorMessage(error), retryInMs: delay });
      throw connectError(error);
    }
    this.failures = 0;
    this.retryAt = 0;
    this.client = client;
    return client;
  }

  private clientOptions(): ImapFlowOptions {
    const c = this.config;
    const options: ImapFlowOptions = {
      host: c.imapHost,
      port: c.imapPort,
      secure: c.imapUseSsl,
      auth: { user: c.imapUsername ?? "", pass: c.imapPassword ?? "" },
      logger: false,
      // Polling, not IDLE: a session idling between polls would hold the lock we poll with.
      disableAutoIdle: true,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      clientInfo: { name: "nanobot" },
    };
    if (!c.imapUseSsl && c.imapStartTls !== undefined) options.doSTARTTLS = c.imapStartTls;
    return options;
  }

  private discard(client: ImapFlow): void {
    if (this.client === client) this.client = undefined;
    client.close();
  }

  private async select(client: ImapFlow, cmd: Command): Promise<MailboxObject> {
    const want = this.config.imapMailbox;
    const current = client.mailbox;
    if (current && samePath(current.path, want)) {
      // NOOP lets the server report mail that arrived since the last command.
      await cmd("noop", client.noop());
      if (client.mailbox) return client.mailbox;
    }
    return cmd("select", client.mailboxOpen(want));
  }

  private async fetchNew(client: ImapFlow, cmd: Command): Promise<IncomingMail[]> {
    const box = await this.select(client, cmd);
    const uidValidity = box.uidValidity.toString();
    const mark = await this.loadMark();
    if (mark && mark.uidValidity !== uidValidity) {
      this.log.warn("IMAP UIDVALIDITY changed; falling back to the unseen flag", { mailbox: box.path });
    }
    this.uidValidity = uidValidity;
    const since = mark?.uidValidity === uidValidity ? mark.lastUid : 0;
    const query: SearchObject = since > 0 ? { seen: false, uid: `${since + 1}:*` } : { seen: false };
    const found = (await cmd("search", client.search(query, { uid: true }))) || [];
    // `n:*` always matches the newest mail, even below n: filter again here.
    const uids = [...new Set(found)]
      .filter((uid) => uid > since && !this.unreadable.has(`${uidValidity}:${uid}`))
      .sort((a, b) => a - b)
      .slice(0, this.options.maxPerPoll ?? 50);
    if (!uids.length) return [];
    const fetched = await cmd("fetch", client.fetchAll(uids.join(","), { uid: true, source: true }, { uid: true }));
    return this.parseAll(fetched.sort((a, b) => a.uid - b.uid), uidValidity);
  }

  private async parseAll(messages: FetchMessageObject[], uidValidity: string): Promise<IncomingMail[]> {
    const out: IncomingMail[] = [];
    for (const message of messages) {
      const uid = String(message.uid);
      try {
        if (!message.source) throw new Error("the server sent no message source");
        out.push(
          await parseMail(message.source, {
            uid,
            uidValidity,
            mediaDir: this.options.mediaDir,
            maxAttachmentBytes: this.config.maxAttachmentBytes,
            onSkipped: (name, reason) => this.log.warn("email attachment not saved", { uid, name, reason }),
          }),
        );
      } catch (error) {
        this.unreadable.add(`${uidValidity}:${uid}`);
        this.log.warn("unreadable email skipped", { uid, error: errorMessage(error) });
      }
    }
    return out;
  }

  private async loadMark(): Promise<ImapMark | undefined> {
    if (!this.markLoaded) {
      this.mark = await readImapMark(this.options.statePath, this.config.imapMailbox);
      this.markLoaded = true;
    }
    return this.mark;
  }
}

/** Connect trouble is worth another try later; a refused login is not. */
function connectError(error: unknown): Error {
  if (error instanceof MailTransportError || error instanceof AbortedError) return error;
  const e = error as { authenticationFailed?: unknown; code?: unknown };
  if (error instanceof Error && e.authenticationFailed === true) return error;
  return new MailTransportError(errorMessage(error), { retryable: true, code: typeof e.code === "string" ? e.code : "ECONNECTION", cause: error });
}

function samePath(a: string, b: string): boolean {
  return a === b || (a.toUpperCase() === "INBOX" && b.toUpperCase() === "INBOX");
}
