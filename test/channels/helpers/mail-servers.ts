/**
 * Real mail servers for the email transport tests: Dovecot (Debian's `dovecot-imapd`) as a
 * foreground child on a loopback port with a throwaway config, and an SMTP sink built on
 * `smtp-server` that parses what it receives and can refuse on demand.
 *
 * Dovecot runs in its own process group under a tiny shell watchdog, so `stop()` kills the
 * whole tree, and even a test process that dies hard takes Dovecot with it within a second.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import type { ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

export const DOVECOT_BINARY = "/usr/sbin/dovecot";

export interface MailUser {
  user: string;
  password: string;
}

export interface DovecotServer {
  readonly host: string;
  readonly port: number;
  /** A fresh mailbox account (from the set created at startup). */
  addUser(): Promise<MailUser>;
  /** Delivers a raw RFC 5322 message by IMAP APPEND; resolves the new UID. */
  deliver(account: MailUser, raw: string): Promise<number>;
  /** The flags of one message. */
  flags(account: MailUser, uid: number): Promise<string[]>;
  /** Kills the server tree at once (a crash); the mail data stays. */
  crash(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  restart(): Promise<void>;
  /** Stops the server and deletes everything. Safe to call twice. */
  destroy(): Promise<void>;
  log(): Promise<string>;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) killGroup(child, "SIGKILL");
});

/**
 * Accounts are all written before Dovecot starts: it re-reads a changed passwd file, but only
 * notices changes a second apart, so accounts added on the fly fail to log in at random.
 */
export async function startDovecot(options: { accounts?: number } = {}): Promise<DovecotServer> {
  if (!existsSync(DOVECOT_BINARY)) throw new Error(`${DOVECOT_BINARY} is missing: install the dovecot-imapd package`);
  const dir = await mkdtemp(join(tmpdir(), "nanobot-dovecot-"));
  const mailOwner = mailOwnerIds();
  // Mail processes run as the mail owner (not root when we are root): they must reach their home.
  await chmod(dir, 0o755);
  await mkdir(join(dir, "home"), { recursive: true });
  await mkdir(join(dir, "run"), { recursive: true });
  await chown(join(dir, "home"), mailOwner.uid, mailOwner.gid);
  const usersFile = join(dir, "users");
  const accounts = Array.from({ length: options.accounts ?? 12 }, (_, i) => ({
    user: `user${i + 1}`,
    password: `pw-${i + 1}-${Math.random().toString(36).slice(2)}`,
  }));
  await writeFile(usersFile, accounts.map((a) => `${a.user}:{PLAIN}${a.password}\n`).join(""), { mode: 0o644 });
  const port = await freePort();
  await writeFile(join(dir, "dovecot.conf"), dovecotConfig(dir, port, mailOwner));

  let child: ChildProcess | undefined;
  let handedOut = 0;
  const launch = async (): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      child = spawnDovecot(join(dir, "dovecot.conf"));
      try {
        await waitForGreeting(port, child);
        return;
      } catch (error) {
        await stopChild(child, "SIGKILL");
        // A restart can race the old listener's release of the port: try again briefly.
        if (attempt >= 3) throw new Error(`dovecot did not start: ${(error as Error).message}\n${await readLog(dir)}`);
      }
    }
  };
  await launch();

  const server: DovecotServer = {
    host: "127.0.0.1",
    port,
    addUser() {
      const account = accounts[handedOut++];
      return account ? Promise.resolve(account) : Promise.reject(new Error(`all ${accounts.length} test accounts are in use`));
    },
    deliver: (account, raw) =>
      withImap(port, account, async (client) => {
        const result = await client.append("INBOX", raw);
        if (!result || result.uid === undefined) throw new Error("APPEND returned no UID");
        return result.uid;
      }),
    flags: (account, uid) =>
      withImap(port, account, async (client) => {
        await client.mailboxOpen("INBOX", { readOnly: true });
        const message = await client.fetchOne(String(uid), { flags: true }, { uid: true });
        return message && message.flags ? [...message.flags].sort() : [];
      }),
    async crash() {
      if (child) await stopChild(child, "SIGKILL");
      child = undefined;
      // A killed master leaves its pid file; a restart would wait for that pid to go away.
      await rm(join(dir, "run", "master.pid"), { force: true });
    },
    async restart() {
      if (child) await stopChild(child, "SIGTERM");
      await launch();
    },
    async destroy() {
      if (child) await stopChild(child, "SIGTERM");
      child = undefined;
      await rm(dir, { recursive: true, force: true });
    },
    log: () => readLog(dir),
  };
  return server;
}

function dovecotConfig(dir: string, port: number, owner: { uid: number; gid: number; name: string }): string {
  return `protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
default_internal_user = ${owner.name}
default_login_user = ${owner.name}
first_valid_uid = 1
# Tests try a wrong password on purpose; the default 2 s penalty only slows them down.
auth_failure_delay = 0
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${owner.uid} gid=${owner.gid} home=${dir}/home/%u
}
service imap-login {
  inet_listener imap {
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
`;
}

/**
 * Dovecot refuses mail processes running as root, so as root the mailboxes belong to `nobody`;
 * otherwise to ourselves (a rootless Dovecot).
 */
function mailOwnerIds(): { uid: number; gid: number; name: string } {
  const me = userInfo();
  if (me.uid !== 0) return { uid: me.uid, gid: me.gid, name: me.username };
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (!uid || !gid) throw new Error("no 'nobody' user in /etc/passwd to own the test mailboxes");
  return { uid: Number(uid), gid: Number(gid), name: "nobody" };
}

/** `sh` runs Dovecot and stops it once this test process is gone, however it died. */
function spawnDovecot(configPath: string): ChildProcess {
  const watchdog = `"$0" -F -c "$1" & child=$!
while kill -0 ${process.pid} 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1; done
kill -TERM $child 2>/dev/null; wait $child`;
  const child = spawn("sh", ["-c", watchdog, DOVECOT_BINARY, configPath], { detached: true, stdio: "ignore" });
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Signals the whole process group and waits for the watchdog to exit (SIGKILL after 3 s). */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    killGroup(child, signal);
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  }
  // Dovecot's own children may outlive the watchdog by a moment: make sure the group is gone.
  killGroup(child, "SIGKILL");
  live.delete(child);
}

/** Resolves once Dovecot sends its real greeting ("… ready."), not just the auth-wait notice. */
async function waitForGreeting(port: number, child: ChildProcess, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error("dovecot exited during startup");
    if (await greets(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no IMAP greeting on port ${port} within ${ms} ms`);
}

function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let text = "";
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on("error", () => done(false));
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (/ready\.\r?\n/.test(text)) done(true);
    });
    socket.on("close", () => done(false));
  });
}

async function withImap<T>(port: number, account: MailUser, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
  const client = new ImapFlow({ host: "127.0.0.1", port, secure: false, auth: { user: account.user, pass: account.password }, logger: false });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

async function readLog(dir: string): Promise<string> {
  return readFile(join(dir, "dovecot.log"), "utf8").catch(() => "(no dovecot log)");
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface SmtpSink {
  readonly port: number;
  /** Every accepted mail, parsed. */
  readonly received: ParsedMail[];
  /** DATA attempts, accepted or refused. */
  attempts: number;
  /** The next DATA is answered with this SMTP code (e.g. 451, 550) instead of accepted. */
  refuseNext(code: number, text: string): void;
  close(): Promise<void>;
}

/** A loopback SMTP server without TLS or mandatory auth that keeps what it is sent. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const refusals: Array<{ code: number; text: string }> = [];
  const received: ParsedMail[] = [];
  const sink = { attempts: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        sink.attempts++;
        const refusal = refusals.shift();
        if (refusal) return callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
        simpleParser(Buffer.concat(chunks)).then(
          (mail) => {
            received.push(mail);
            callback();
          },
          (error: unknown) => callback(error as Error),
        );
      });
    },
  });
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.server.address() as AddressInfo;
  return {
    port: address.port,
    received,
    get attempts() {
      return sink.attempts;
    },
    set attempts(n: number) {
      sink.attempts = n;
    },
    refuseNext: (code, text) => refusals.push({ code, text }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface RawMailOptions {
  from: string;
  to?: string;
  subject?: string;
  body?: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string[];
  /** Extra header lines, e.g. `Auto-Submitted: auto-replied`. */
  headers?: string[];
  /** Replaces the default text/plain body part (with its Content-Type header). */
  mime?: { contentType: string; body: string };
}

/** A minimal RFC 5322 message with CRLF line ends, as a mail client would submit it. */
export function rawMail(options: RawMailOptions): string {
  const lines = [
    `From: ${options.from}`,
    `To: ${options.to ?? "bot@nano.example"}`,
    `Subject: ${options.subject ?? "Hello"}`,
    "Date: Tue, 02 Dec 2025 10:00:00 +0000",
    ...(options.messageId ? [`Message-ID: ${options.messageId}`] : []),
    ...(options.inReplyTo ? [`In-Reply-To: ${options.inReplyTo}`] : []),
    ...(options.references?.length ? [`References: ${options.references.join(" ")}`] : []),
    ...(options.headers ?? []),
    "MIME-Version: 1.0",
    `Content-Type: ${options.mime?.contentType ?? "text/plain; charset=utf-8"}`,
    "",
    options.mime?.body ?? options.body ?? "Hi there",
  ];
  return `${lines.join("\r\n")}\r\n`;
}
