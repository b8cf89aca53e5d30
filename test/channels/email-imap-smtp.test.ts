/**
 * The email channel over its real transport: Dovecot for IMAP, an smtp-server sink for SMTP,
 * the channel built by the default factories (so the wiring is under test too).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import type { BusError } from "../../src/bus/types.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { fakeClock, nextInbound, recordingSleep, tempHome } from "./helpers/harness.js";
import { rawMail, startDovecot, startSmtpSink } from "./helpers/mail-servers.js";
import type { DovecotServer, MailUser, SmtpSink } from "./helpers/mail-servers.js";
import { needs } from "../support/requires.js";

const mail = needs.dovecot();

let dovecot: DovecotServer;
let sink: SmtpSink;

beforeAll(async () => {
  if (mail.available) [dovecot, sink] = await Promise.all([startDovecot(), startSmtpSink()]);
});

afterAll(async () => {
  await Promise.all([dovecot?.destroy(), sink?.close()]);
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  sink.received.length = 0;
  sink.attempts = 0;
});

function emailSettings(account: MailUser, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    enabled: true,
    fromAddress: "bot@nano.example",
    allowFrom: ["alice@example.com"],
    imapHost: "127.0.0.1",
    imapPort: dovecot.port,
    imapUsername: account.user,
    imapPassword: account.password,
    imapUseSsl: false,
    smtpHost: "127.0.0.1",
    smtpPort: sink.port,
    smtpUseTls: false,
    timeoutSeconds: 5,
    ...overrides,
  };
}

async function startChannel(settings: Record<string, unknown>, home?: string) {
  const ownHome = home ? undefined : await tempHome();
  const dir = home ?? ownHome!.dir;
  const bus = new InProcessBus();
  const busErrors: BusError[] = [];
  bus.onError((e) => busErrors.push(e));
  const clock = fakeClock();
  const { sleep, waits } = recordingSleep();
  const manager = new ChannelManager({
    bus,
    home: dir,
    clock,
    delivery: new DeliveryQueue({ sleep }),
    channels: { email: settings },
    factories: defaultChannelFactories(),
  });
  const results = await manager.startAll();
  const stop = async (): Promise<void> => {
    await manager.stopAll();
    await ownHome?.cleanup();
  };
  cleanups.push(stop);
  return { bus, clock, waits, busErrors, results, home: dir, stop };
}

/** Starts the channel and insists it came up (a failed start would make later checks vacuous). */
async function startedChannel(settings: Record<string, unknown>, home?: string) {
  const channel = await startChannel(settings, home);
  expect(channel.results).toEqual([{ name: "email", ok: true }]);
  return channel;
}

mail.describe("email over IMAP + SMTP", () => {
  it("forwards an allowed sender's mail and answers in its thread", async () => {
    const account = await dovecot.addUser();
    const uid = await dovecot.deliver(
      account,
      rawMail({
        from: "Alice <Alice@Example.com>",
        subject: "Lunch?",
        body: "Are you free at noon?",
        messageId: "<q1@example.com>",
        inReplyTo: "<r0@example.com>",
        references: ["<r0@example.com>"],
      }),
    );
    const { bus } = await startedChannel(emailSettings(account));

    const inbound = await nextInbound(bus);
    expect(inbound).toMatchObject({ channel: "email", chatId: "alice@example.com", senderId: "alice@example.com", content: "Subject: Lunch?\n\nAre you free at noon?" });
    expect(inbound.metadata).toMatchObject({ messageId: "<q1@example.com>", threadId: "<r0@example.com>", senderName: "Alice" });
    expect(await dovecot.flags(account, uid)).toContain("\\Seen");

    await bus.publishOutbound({ kind: "message", channel: "email", chatId: "alice@example.com", id: "reply-1", content: "Yes, noon works." });
    expect(sink.received).toHaveLength(1);
    const reply = sink.received[0]!;
    expect(reply.subject).toBe("Re: Lunch?");
    expect(reply.from?.value[0]?.address).toBe("bot@nano.example");
    expect(reply.headers.get("to")).toMatchObject({ value: [{ address: "alice@example.com" }] });
    expect(reply.inReplyTo).toBe("<q1@example.com>");
    expect(reply.references).toEqual(["<r0@example.com>", "<q1@example.com>"]);
    expect(reply.messageId).toMatch(/^<[0-9a-f]{32}@nano\.example>$/);
    expect(reply.text?.trim()).toBe("Yes, noon works.");
  });

  it("drops mail from senders outside allowFrom without answering, and still marks it seen", async () => {
    const account = await dovecot.addUser();
    const strangerUid = await dovecot.deliver(account, rawMail({ from: "mallory@evil.example", subject: "Hi", messageId: "<s1@evil.example>" }));
    await dovecot.deliver(account, rawMail({ from: "alice@example.com", subject: "Ping", body: "ping", messageId: "<a1@example.com>" }));
    const { bus } = await startedChannel(emailSettings(account));

    expect((await nextInbound(bus)).senderId).toBe("alice@example.com");
    expect(bus.inboundSize()).toBe(0);
    expect(sink.attempts).toBe(0);
    expect(await dovecot.flags(account, strangerUid)).toContain("\\Seen");
  });

  it("does not hand over the same mail again after a restart (persisted UID, markSeen off)", async () => {
    const account = await dovecot.addUser();
    const home = await tempHome();
    cleanups.push(home.cleanup);
    const firstUid = await dovecot.deliver(account, rawMail({ from: "alice@example.com", body: "first", messageId: "<f1@example.com>" }));
    const settings = emailSettings(account, { markSeen: false });

    const first = await startedChannel(settings, home.dir);
    expect((await nextInbound(first.bus)).content).toContain("first");
    await first.stop();
    // The mail really is still unseen on the server: only the persisted mark keeps it out.
    expect(await dovecot.flags(account, firstUid)).not.toContain("\\Seen");
    const state = JSON.parse(await readFile(join(home.dir, "channels", "email", "imap-state.json"), "utf8")) as unknown;
    expect(state).toMatchObject({ mailboxes: { INBOX: { lastUid: firstUid } } });

    const second = await startedChannel(settings, home.dir);
    expect(second.bus.inboundSize()).toBe(0);
    await dovecot.deliver(account, rawMail({ from: "alice@example.com", body: "second", messageId: "<f2@example.com>" }));
    second.clock.advance(30_000);
    expect((await nextInbound(second.bus)).content).toContain("second");
    expect(second.bus.inboundSize()).toBe(0);
  });

  it("retries a temporary SMTP refusal (4xx) once and sends a single mail", async () => {
    const account = await dovecot.addUser();
    const { bus, waits, busErrors } = await startedChannel(emailSettings(account));
    sink.refuseNext(451, "Try again later");
    await bus.publishOutbound({ kind: "message", channel: "email", chatId: "alice@example.com", id: "t-1", content: "hello" });
    expect(waits).toEqual([1000]);
    expect(sink.attempts).toBe(2);
    expect(sink.received.map((m) => m.text?.trim())).toEqual(["hello"]);
    expect(sink.received[0]!.subject).toBe("Message from nanobot");
    expect(busErrors).toEqual([]);
  });

  it("reports a permanent SMTP refusal (5xx) without retrying", async () => {
    const account = await dovecot.addUser();
    const { bus, waits, busErrors } = await startedChannel(emailSettings(account));
    sink.refuseNext(550, "No such user here");
    await bus.publishOutbound({ kind: "message", channel: "email", chatId: "alice@example.com", id: "p-1", content: "hello" });
    expect(waits).toEqual([]);
    expect(sink.attempts).toBe(1);
    expect(sink.received).toEqual([]);
    expect(busErrors).toHaveLength(1);
  });

  it("saves attachments under <home>/media/email and reads HTML-only bodies as text", async () => {
    const account = await dovecot.addUser();
    const pdf = Buffer.from("%PDF-1.4 pretend").toString("base64");
    await dovecot.deliver(
      account,
      rawMail({
        from: "alice@example.com",
        subject: "Report",
        messageId: "<att@example.com>",
        mime: {
          contentType: 'multipart/mixed; boundary="b1"',
          body: [
            "--b1",
            "Content-Type: text/html; charset=utf-8",
            "",
            "<p>See the <b>attached</b> report.</p>",
            "--b1",
            'Content-Type: application/pdf; name="q3 report.pdf"',
            'Content-Disposition: attachment; filename="../q3 report.pdf"',
            "Content-Transfer-Encoding: base64",
            "",
            pdf,
            "--b1--",
          ].join("\r\n"),
        },
      }),
    );
    const { bus, home } = await startedChannel(emailSettings(account));
    const inbound = await nextInbound(bus);
    expect(inbound.content).toBe("Subject: Report\n\nSee the attached report.");
    expect(inbound.media).toHaveLength(1);
    const media = inbound.media![0]!;
    expect(media).toMatchObject({ kind: "document", mimeType: "application/pdf", name: "../q3 report.pdf" });
    expect(media.path!.startsWith(join(home, "media", "email") + "/")).toBe(true);
    expect(media.path).toMatch(/-q3_report\.pdf$/);
    expect(await readFile(media.path!, "utf8")).toBe("%PDF-1.4 pretend");
  });

  it("never forwards auto-replies", async () => {
    const account = await dovecot.addUser();
    await dovecot.deliver(account, rawMail({ from: "alice@example.com", body: "I am on holiday", headers: ["Auto-Submitted: auto-replied"] }));
    await dovecot.deliver(account, rawMail({ from: "alice@example.com", body: "real one" }));
    const { bus } = await startedChannel(emailSettings(account));
    expect((await nextInbound(bus)).content).toContain("real one");
    expect(bus.inboundSize()).toBe(0);
  });

  it("a wrong IMAP password fails the start, naming no secret", async () => {
    const account = await dovecot.addUser();
    const { results } = await startChannel(emailSettings({ user: account.user, password: "wrong-secret" }));
    expect(results[0]).toMatchObject({ name: "email", ok: false });
    expect(results[0]!.error).not.toContain("wrong-secret");
  });

  it("without hosts and credentials the channel reports which settings are missing", async () => {
    const { results } = await startChannel({ enabled: true, fromAddress: "bot@nano.example", smtpHost: "127.0.0.1" });
    expect(results).toEqual([
      { name: "email", ok: false, error: expect.stringContaining("needs imapHost, imapUsername, imapPassword") as unknown as string },
    ]);
  });
});
