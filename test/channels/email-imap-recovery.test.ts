/**
 * The email transport when the network misbehaves: Dovecot crashing and coming back, connect
 * failures backing off, and servers that accept a connection and then say nothing.
 */
import { createServer } from "node:net";
import type { Server, Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { parseEmailConfig } from "../../src/channels/email/config.js";
import { ImapSmtpTransport } from "../../src/channels/email/imap-smtp-transport.js";
import { isRetryableMailError } from "../../src/channels/email/transport.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import type { Logger } from "../../src/core/logger.js";
import { fakeClock, nextInbound, tempHome, waitFor } from "./helpers/harness.js";
import type { FakeClock } from "./helpers/harness.js";
import { freePort, rawMail, startDovecot } from "./helpers/mail-servers.js";
import type { DovecotServer } from "./helpers/mail-servers.js";
import { needs } from "../support/requires.js";

const mail = needs.dovecot();

interface LogLine {
  level: string;
  msg: string;
  data?: Record<string, unknown>;
}

function captureLogger(lines: LogLine[]): Logger {
  const at = (level: string) => (msg: string, data?: Record<string, unknown>) => void lines.push({ level, msg, ...(data ? { data } : {}) });
  const logger: Logger = { trace: at("trace"), debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => logger };
  return logger;
}

let dovecot: DovecotServer;
beforeAll(async () => {
  if (mail.available) dovecot = await startDovecot();
});
afterAll(async () => {
  await dovecot?.destroy();
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function startEmail() {
  const account = await dovecot.addUser();
  const home = await tempHome();
  const bus = new InProcessBus();
  const clock = fakeClock();
  const lines: LogLine[] = [];
  const manager = new ChannelManager({
    bus,
    home: home.dir,
    clock,
    logger: captureLogger(lines),
    channels: {
      email: {
        enabled: true,
        fromAddress: "bot@nano.example",
        allowFrom: ["alice@example.com"],
        imapHost: "127.0.0.1",
        imapPort: dovecot.port,
        imapUsername: account.user,
        imapPassword: account.password,
        imapUseSsl: false,
        smtpHost: "127.0.0.1",
        smtpUseTls: false,
        pollIntervalSeconds: 30,
        timeoutSeconds: 5,
      },
    },
    factories: defaultChannelFactories(),
  });
  expect(await manager.startAll()).toEqual([{ name: "email", ok: true }]);
  cleanups.push(async () => {
    await manager.stopAll();
    await home.cleanup();
  });
  return { account, bus, clock, lines };
}

/** Fires the next poll once the previous one has finished and re-armed its timer. */
async function nextPoll(clock: FakeClock): Promise<void> {
  await waitFor(() => clock.pendingTimers() === 1, "the poll timer to be armed");
  clock.advance(30_000);
}

mail.describe("email transport recovery", () => {
  it("a server restart between polls costs nothing: the next poll reconnects", async () => {
    const { account, bus, clock } = await startEmail();
    await dovecot.crash();
    await dovecot.restart();
    await dovecot.deliver(account, rawMail({ from: "alice@example.com", body: "after the restart" }));
    await nextPoll(clock);
    expect((await nextInbound(bus)).content).toContain("after the restart");
  });

  it("a poll while the server is down fails; once it is back, the next poll after the backoff succeeds", async () => {
    const { account, bus, clock, lines } = await startEmail();
    await dovecot.crash();
    await nextPoll(clock);
    await waitFor(() => lines.some((l) => l.msg === "email poll failed"), "the failed poll to be logged");
    expect(lines.find((l) => l.msg === "IMAP connect failed")?.data).toMatchObject({ retryInMs: 10_000 });

    await dovecot.restart();
    await dovecot.deliver(account, rawMail({ from: "alice@example.com", body: "back online" }));
    await nextPoll(clock);
    expect((await nextInbound(bus)).content).toContain("back online");
    // Credentials never reach the log.
    expect(JSON.stringify(lines)).not.toContain(account.password);
  });
});

describe("email transport deadlines and backoff", () => {
  let silent: Server;
  let silentPort: number;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never says a word: no greeting, no banner.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    silentPort = (silent.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  async function transportTo(imapPort: number, smtpPort: number, now?: () => number) {
    const home = await tempHome();
    const config = parseEmailConfig({
      fromAddress: "bot@nano.example",
      imapHost: "127.0.0.1",
      imapPort,
      imapUsername: "u",
      imapPassword: "p",
      imapUseSsl: false,
      smtpHost: "127.0.0.1",
      smtpPort,
      smtpUseTls: false,
    });
    const transport = new ImapSmtpTransport({ config, name: "email", home: home.dir, timeoutMs: 300, ...(now ? { now } : {}) });
    cleanups.push(async () => {
      await transport.close();
      await home.cleanup();
    });
    return transport;
  }

  it("an IMAP server that never greets fails the poll with a retryable timeout", async () => {
    const transport = await transportTo(silentPort, silentPort);
    const error = await transport.fetchUnseen().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(isRetryableMailError(error)).toBe(true);
  });

  it("an SMTP server that never greets fails the send with a retryable error", async () => {
    const transport = await transportTo(silentPort, silentPort);
    const error = await transport.send({ from: "bot@nano.example", to: "a@example.com", subject: "s", text: "t", messageId: "<x@nano.example>" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(isRetryableMailError(error)).toBe(true);
  });

  it("failed connects back off exponentially, without touching the network in between", async () => {
    let now = 1_000_000;
    const transport = await transportTo(await freePort(), silentPort, () => now);
    const failure = () =>
      transport.fetchUnseen().then(
        () => "connected",
        (e: unknown) => `${(e as { code?: string }).code}: ${(e as Error).message}`,
      );
    expect(await failure()).toMatch(/^ECONNREFUSED/);
    expect(await failure()).toBe("EBACKOFF: IMAP reconnect backing off, next attempt in 10 s");
    now += 10_000;
    expect(await failure()).toMatch(/^ECONNREFUSED/);
    expect(await failure()).toBe("EBACKOFF: IMAP reconnect backing off, next attempt in 20 s");
  });
});
