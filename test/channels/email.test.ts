import { afterEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import type { BusError } from "../../src/bus/types.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import { replySubject, stripQuotedReply } from "../../src/channels/email/email-channel.js";
import type { IncomingMail, MailTransport, OutgoingMail } from "../../src/channels/email/transport.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { fakeClock, nextInbound, recordingSleep, tempHome, waitFor } from "./helpers/harness.js";

/** An in-memory mailbox standing in for IMAP + SMTP. */
class FakeMailbox implements MailTransport {
  unseen: IncomingMail[] = [];
  seen: string[] = [];
  sent: OutgoingMail[] = [];
  sendFailures: Error[] = [];
  closed = false;
  fetchUnseen(): Promise<IncomingMail[]> {
    const mails = this.unseen.filter((m) => !this.seen.includes(m.uid));
    return Promise.resolve(mails);
  }
  markSeen(uid: string): Promise<void> {
    this.seen.push(uid);
    return Promise.resolve();
  }
  send(mail: OutgoingMail): Promise<void> {
    const failure = this.sendFailures.shift();
    if (failure) return Promise.reject(failure);
    this.sent.push(mail);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

function mail(uid: string, from: string, overrides: Partial<IncomingMail> = {}): IncomingMail {
  return { uid, messageId: `<${uid}@mail.example>`, from: { address: from }, subject: "Plans", text: "Shall we meet?", references: [], ...overrides };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function startEmail(mailbox: FakeMailbox, config: Record<string, unknown> = {}) {
  const home = await tempHome();
  const bus = new InProcessBus();
  const busErrors: BusError[] = [];
  bus.onError((e) => busErrors.push(e));
  const clock = fakeClock();
  const { sleep, waits } = recordingSleep();
  const manager = new ChannelManager({
    bus,
    home: home.dir,
    clock,
    delivery: new DeliveryQueue({ sleep }),
    channels: { email: { enabled: true, fromAddress: "bot@nano.example", allowFrom: ["Alice@Example.com"], ...config } },
    factories: defaultChannelFactories({ mailTransport: () => mailbox }),
  });
  const results = await manager.startAll();
  cleanups.push(async () => {
    await manager.stopAll();
    await home.cleanup();
  });
  return { bus, clock, waits, busErrors, results };
}

describe("email: inbound", () => {
  it("forwards mail from allowed addresses (case-insensitive) and marks it seen; drops others silently", async () => {
    const box = new FakeMailbox();
    box.unseen.push(mail("1", "ALICE@example.com"), mail("2", "spam@bad.example"));
    const { bus } = await startEmail(box);
    const inbound = await nextInbound(bus);
    expect(inbound).toMatchObject({ channel: "email", chatId: "alice@example.com", senderId: "alice@example.com", content: "Subject: Plans\n\nShall we meet?" });
    expect(inbound.metadata).toMatchObject({ messageId: "<1@mail.example>", threadId: "<1@mail.example>" });
    expect(bus.inboundSize()).toBe(0);
    expect(box.seen).toEqual(["1", "2"]);
    expect(box.sent).toEqual([]); // no pairing code is mailed to strangers
  });

  it("polls again every pollIntervalSeconds", async () => {
    const box = new FakeMailbox();
    const { bus, clock } = await startEmail(box, { pollIntervalSeconds: 60 });
    box.unseen.push(mail("3", "alice@example.com", { text: "later mail" }));
    clock.advance(59_000);
    expect(bus.inboundSize()).toBe(0);
    clock.advance(1_000);
    expect((await nextInbound(bus)).content).toContain("later mail");
  });

  it("ignores its own mails and auto-submitted ones", async () => {
    const box = new FakeMailbox();
    box.unseen.push(mail("4", "bot@nano.example"), mail("5", "alice@example.com", { autoSubmitted: true }));
    const { bus } = await startEmail(box, { allowFrom: ["*"] });
    expect(box.seen).toEqual(["4", "5"]);
    expect(bus.inboundSize()).toBe(0);
  });
});

describe("email: replies", () => {
  it("answers in the thread: Re: subject, In-Reply-To and References", async () => {
    const box = new FakeMailbox();
    box.unseen.push(mail("6", "alice@example.com", { subject: "Plans", messageId: "<m2@x>", inReplyTo: "<m1@x>", references: ["<m1@x>"] }));
    const { bus } = await startEmail(box);
    await nextInbound(bus);
    await bus.publishOutbound({ kind: "message", channel: "email", chatId: "alice@example.com", id: "d-1", content: "Yes, at noon." });
    expect(box.sent).toHaveLength(1);
    expect(box.sent[0]).toMatchObject({
      from: "bot@nano.example",
      to: "alice@example.com",
      subject: "Re: Plans",
      text: "Yes, at noon.",
      inReplyTo: "<m2@x>",
      references: ["<m1@x>", "<m2@x>"],
    });
    expect(box.sent[0]!.messageId).toMatch(/^<[0-9a-f]{32}@nano\.example>$/);
  });

  it("sends once per delivery id, retries transient SMTP failures, ignores deltas", async () => {
    const box = new FakeMailbox();
    const { bus, waits } = await startEmail(box);
    box.sendFailures.push(Object.assign(new Error("451 try later"), { responseCode: 451 }));
    await bus.publishOutbound({ kind: "delta", channel: "email", chatId: "alice@example.com", streamId: "s", delta: "partial" });
    const end = { kind: "stream_end" as const, channel: "email", chatId: "alice@example.com", streamId: "s", id: "d-2", content: "whole" };
    await bus.publishOutbound(end);
    await bus.publishOutbound(end);
    expect(waits).toEqual([1000]);
    expect(box.sent.map((m) => [m.text, m.subject])).toEqual([["whole", "Message from nanobot"]]);
  });

  it("a permanent SMTP failure is reported, not retried", async () => {
    const box = new FakeMailbox();
    const { bus, waits, busErrors } = await startEmail(box);
    box.sendFailures.push(Object.assign(new Error("550 no such user"), { responseCode: 550 }));
    await bus.publishOutbound({ kind: "message", channel: "email", chatId: "alice@example.com", id: "d-3", content: "x" });
    expect(waits).toEqual([]);
    expect(busErrors).toHaveLength(1);
  });
});

describe("email: setup", () => {
  it("without a transport the manager reports the missing packages", async () => {
    const home = await tempHome();
    cleanups.push(home.cleanup);
    const manager = new ChannelManager({
      bus: new InProcessBus(),
      home: home.dir,
      channels: { email: { enabled: true, fromAddress: "bot@nano.example" } },
      factories: defaultChannelFactories(),
    });
    const [result] = await manager.startAll();
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("imapflow, nodemailer and mailparser") });
  });

  it("a failing first poll fails the start", async () => {
    const box = new FakeMailbox();
    box.fetchUnseen = () => Promise.reject(new Error("IMAP login failed"));
    const { results } = await startEmail(box);
    expect(results).toEqual([{ name: "email", ok: false, error: "IMAP login failed" }]);
    await waitFor(() => box.closed, "the transport to be closed");
  });
});

describe("email helpers", () => {
  it("replySubject adds the prefix once", () => {
    expect(replySubject("Plans", "Re: ")).toBe("Re: Plans");
    expect(replySubject("RE: Plans", "Re: ")).toBe("RE: Plans");
    expect(replySubject("  ", "Re: ")).toBe("Re: (no subject)");
  });

  it("stripQuotedReply drops the quoted history", () => {
    expect(stripQuotedReply("Sounds good.\n\nOn Mon, 1 Jan 2026, Bot <bot@x> wrote:\n> Shall we?\n> ok\n")).toBe("Sounds good.");
    expect(stripQuotedReply("> only a quote")).toBe("> only a quote");
  });
});
