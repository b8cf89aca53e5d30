/**
 * Matrix specifics beyond the channel kit: config keys (refusals naming the key, the Python
 * keys that are warned about), the access-token and password logins, invites, history replayed
 * by the first sync, the room policies, threads, formatted bodies, edits, transaction-id
 * idempotency, rate limits, typing notices, media limits and sync failures — all through the
 * real matrix-js-sdk against the fake homeserver.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { parseMatrixConfig } from "../../src/channels/matrix/config.js";
import { markdownToMatrixHtml } from "../../src/channels/matrix/markdown-html.js";
import { sessionPath } from "../../src/channels/matrix/session.js";
import { MATRIX_BOT, MATRIX_GROUP_ROOM, MATRIX_PASSWORD } from "./helpers/fake-matrix.js";
import { nextInbound, tempHome, waitFor } from "./helpers/harness.js";
import { MATRIX_ALICE, MATRIX_BOB, MATRIX_MALLORY, matrixDmRoom, startMatrix } from "./kit/matrix-platform.js";
import type { MatrixSession } from "./kit/matrix-platform.js";

let session: MatrixSession | undefined;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await session?.close();
  session = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function start(...args: Parameters<typeof startMatrix>): Promise<MatrixSession> {
  session = await startMatrix(...args);
  return session;
}

const dm = matrixDmRoom(MATRIX_ALICE);

describe("matrix config", () => {
  const base = { enabled: true, userId: "@bot:example.org", accessToken: "syt_x" };

  it("takes the Python keys with the Python defaults", () => {
    const config = parseMatrixConfig(base);
    expect(config).toMatchObject({
      homeserver: "https://matrix.org",
      groupPolicy: "open",
      groupAllowFrom: [],
      allowRoomMentions: false,
      streaming: false,
      maxMediaBytes: 20 * 1024 * 1024,
      maxConcurrentMediaDownloads: 2,
      e2eeEnabled: true,
    });
  });

  it("refuses a config without userId, without any credential, or with a malformed id, naming the key", () => {
    expect(() => parseMatrixConfig({ enabled: true, accessToken: "t" })).toThrow(/^channels\.matrix\.userId: expected the bot's Matrix id/);
    expect(() => parseMatrixConfig({ enabled: true, userId: "@bot:example.org" }, "mx")).toThrow(/^channels\.mx\.accessToken: expected an access token \(or channels\.mx\.password/);
    expect(() => parseMatrixConfig({ ...base, userId: "bot" })).toThrow(/^channels\.matrix\.userId: expected a Matrix id of the form @name:server/);
    expect(() => parseMatrixConfig({ ...base, groupPolicy: "everyone" })).toThrow(/^channels\.matrix\.groupPolicy:/);
  });

  it("warns about the Python keys it cannot honour, each with the reason", () => {
    const notes = channelSettingNotes({ matrix: { ...base, e2eeEnabled: true, sasVerification: true, syncStopGraceSeconds: 2 } });
    expect(notes).toEqual([
      expect.stringMatching(/^channels\.matrix\.sasVerification is ignored: .*does not do interactive \(emoji\/SAS\) verification or cross-signing/),
      expect.stringMatching(/^channels\.matrix\.syncStopGraceSeconds is ignored/),
    ]);
    expect(channelSettingNotes({ matrix: { ...base, e2eeEnabled: false, sasVerification: true } })).toEqual([
      expect.stringMatching(/^channels\.matrix\.sasVerification is ignored: .*e2eeEnabled is false/),
    ]);
    expect(channelSettingNotes({ matrix: { ...base, e2eeEnabled: true } })).toEqual([]);
  });
});

describe("matrix login", () => {
  it("refuses to start with a token the homeserver does not know, naming channels.matrix.accessToken", async () => {
    await expect(start({ accessToken: "syt_wrong" })).rejects.toThrow(/channels\.matrix\.accessToken: the homeserver .* refused the access token/);
  });

  it("refuses a token that belongs to another user, naming channels.matrix.userId", async () => {
    await expect(start({ userId: "@other:fake.test" })).rejects.toThrow(/channels\.matrix\.userId: is "@other:fake\.test" but the access token belongs to "@nanobot:fake\.test"/);
  });

  it("without end-to-end encryption, logs in with the password once and reuses the kept session on the next start", async () => {
    const home = await tempHome();
    cleanups.push(home.cleanup);
    const s = await start({ password: MATRIX_PASSWORD, e2eeEnabled: false }, { noToken: true, home: home.dir });
    expect(s.fake.logins).toBe(1);
    const path = sessionPath(home.dir, "matrix");
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ userId: MATRIX_BOT.id, accessToken: "syt_login_1" });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await s.close();
    session = undefined;
    // A new homeserver knows no token: the kept one is refused, and the channel logs in again.
    const again = await start({ password: MATRIX_PASSWORD, e2eeEnabled: false }, { noToken: true, home: home.dir });
    expect(again.fake.logins).toBe(1);
    expect(again.fake.requests.filter((r) => r.path.endsWith("/sync")).every((r) => r.token === "syt_login_1")).toBe(true);
  });

  it("refuses a wrong password, naming channels.matrix.password", async () => {
    await expect(start({ password: "nope" }, { noToken: true })).rejects.toThrow(/channels\.matrix\.password: the homeserver refused the login/);
  });
});

describe("matrix rooms", () => {
  it("does not answer the history the first sync replays", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] }, { before: (fake) => void fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.text", body: "old question" }) });
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.text", body: "new question" });
    expect((await nextInbound(s.bus)).content).toBe("new question");
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("joins a room an allowed user invites it to and answers there; ignores invites from others", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    s.fake.invite("!fromalice:fake.test", MATRIX_ALICE.id);
    s.fake.invite("!frommallory:fake.test", MATRIX_MALLORY.id);
    await waitFor(() => s.fake.joins.includes("!fromalice:fake.test"), "the join");
    s.fake.userSends("!fromalice:fake.test", MATRIX_ALICE.id, { msgtype: "m.text", body: "hi in the new room" });
    expect(await nextInbound(s.bus)).toMatchObject({ chatId: "!fromalice:fake.test", content: "hi in the new room" });
    expect(s.fake.joins).toEqual(["!fromalice:fake.test"]);
  });

  it("with groupPolicy allowlist, answers only in the groupAllowFrom rooms", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id], groupPolicy: "allowlist", groupAllowFrom: ["!other:fake.test"] }, {
      before: (fake) => fake.addRoom("!other:fake.test", [MATRIX_ALICE.id, MATRIX_BOT.id, MATRIX_BOB]),
    });
    s.fake.userSends(MATRIX_GROUP_ROOM, MATRIX_ALICE.id, { msgtype: "m.text", body: "not this room" });
    s.fake.userSends("!other:fake.test", MATRIX_ALICE.id, { msgtype: "m.text", body: "this room" });
    expect(await nextInbound(s.bus)).toMatchObject({ chatId: "!other:fake.test", content: "this room" });
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("with groupPolicy mention, counts @room only with allowRoomMentions, and the bot's id in plain text", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id], groupPolicy: "mention" });
    s.fake.userSends(MATRIX_GROUP_ROOM, MATRIX_ALICE.id, { msgtype: "m.text", body: "@room lunch?", "m.mentions": { room: true } });
    s.fake.userSends(MATRIX_GROUP_ROOM, MATRIX_ALICE.id, { msgtype: "m.text", body: `${MATRIX_BOT.id} what time is it` });
    expect(await nextInbound(s.bus)).toMatchObject({ content: "what time is it" });
    expect(s.bus.inboundSize()).toBe(0);
    await s.close();
    const open = await start({ allowFrom: [MATRIX_ALICE.id], groupPolicy: "mention", allowRoomMentions: true });
    open.fake.userSends(MATRIX_GROUP_ROOM, MATRIX_ALICE.id, { msgtype: "m.text", body: "@room lunch?", "m.mentions": { room: true } });
    expect(await nextInbound(open.bus)).toMatchObject({ content: "@room lunch?" });
  });

  it("ignores notices (other bots), edits, and encrypted events it cannot read", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    const first = s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.notice", body: "I am a bot" });
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.text", body: "* edited", "m.new_content": { msgtype: "m.text", body: "edited" }, "m.relates_to": { rel_type: "m.replace", event_id: first } });
    s.fake.userSends(dm, MATRIX_ALICE.id, { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "AwgA", session_id: "s", device_id: "D" }, "m.room.encrypted");
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.text", body: "plain" });
    expect((await nextInbound(s.bus)).content).toBe("plain");
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("keeps a thread as its own session and answers inside the thread", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    const root = s.fake.userSends(MATRIX_GROUP_ROOM, MATRIX_ALICE.id, { msgtype: "m.text", body: "thread root" });
    await nextInbound(s.bus);
    const asked = s.fake.userSends(MATRIX_GROUP_ROOM, MATRIX_ALICE.id, {
      msgtype: "m.text",
      body: "in the thread",
      "m.relates_to": { rel_type: "m.thread", event_id: root, is_falling_back: true, "m.in_reply_to": { event_id: root } },
    });
    const inbound = await nextInbound(s.bus);
    expect(inbound).toMatchObject({ content: "in the thread", sessionKey: `matrix:${MATRIX_GROUP_ROOM}:thread:${root}` });
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: MATRIX_GROUP_ROOM, id: "t-1", content: "thread answer", replyTo: asked });
    expect(s.fake.messages.at(-1)).toMatchObject({ body: "thread answer", threadRoot: root, replyTo: asked });
    expect(s.fake.messages.at(-1)!.content["m.relates_to"]).toMatchObject({ rel_type: "m.thread", is_falling_back: false });
  });
});

describe("matrix sending", () => {
  it("sends markdown with an org.matrix.custom.html body; plain text has none; raw HTML is shown, not run", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "f-1", content: "**bold** and `code`" });
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "f-2", content: "just words" });
    const [formatted, plain] = s.fake.messages;
    expect(formatted!.content).toMatchObject({ msgtype: "m.text", body: "**bold** and `code`", format: "org.matrix.custom.html", formatted_body: "<p><strong>bold</strong> and <code>code</code></p>", "m.mentions": {} });
    expect(plain!.content).not.toHaveProperty("formatted_body");
    expect(markdownToMatrixHtml("<script>alert(1)</script> [x](javascript:alert(1))")).not.toMatch(/<script|href="javascript/);
  });

  it("streams by m.replace edits that carry the new content", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id], streaming: true });
    const to = { channel: "matrix", chatId: dm };
    await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "x", delta: "Hel" });
    await waitFor(() => s.fake.messages.length === 1, "the preview");
    await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "x", id: "x-final", content: "Hello **there**" });
    const edit = s.fake.requests.filter((r) => r.method === "PUT" && r.path.includes("/send/")).at(-1)!.body as Record<string, unknown>;
    expect(edit).toMatchObject({
      body: "* Hello **there**",
      "m.new_content": { msgtype: "m.text", body: "Hello **there**", format: "org.matrix.custom.html" },
      "m.relates_to": { rel_type: "m.replace", event_id: s.fake.messages[0]!.eventId },
    });
    expect(s.fake.messages.map((m) => m.body)).toEqual(["Hello **there**"]);
  });

  it("retries a send with the same transaction id, so the homeserver keeps one event", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] }, { switches: { sendMaxRetries: 3 } });
    s.fake.failNext("PUT /_matrix/client/v3/rooms/*/send/*/*", 502);
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "same-1", content: "once" });
    const puts = s.fake.requests.filter((r) => r.method === "PUT" && r.path.includes("/send/"));
    expect(puts).toHaveLength(2);
    expect(puts[0]!.path).toBe(puts[1]!.path);
    // The same delivery again (a resumed turn): nothing new on the homeserver.
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "same-1", content: "once" });
    expect(s.fake.messages.map((m) => m.body)).toEqual(["once"]);
  });

  it("waits as long as a 429 says before retrying", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] }, { switches: { sendMaxRetries: 3 } });
    s.fake.failNext("PUT /_matrix/client/v3/rooms/*/send/*/*", 429, 1, { errcode: "M_LIMIT_EXCEEDED", error: "slow down", retry_after_ms: 3500 });
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "rl-1", content: "after the limit" });
    expect(s.waits).toEqual([3500]);
    expect(s.fake.messages.map((m) => m.body)).toEqual(["after the limit"]);
  });

  it("does not retry a refusal (403) and reports it", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] }, { switches: { sendMaxRetries: 3 } });
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: "!notjoined:fake.test", id: "no-1", content: "hello?" });
    expect(s.waits).toEqual([]);
    expect(s.busErrors).toHaveLength(1);
  });

  it("sends typing notices with a 30 s timeout and clears them with the reply", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.text", body: "hi" });
    await nextInbound(s.bus);
    await waitFor(() => s.fake.typingCalls.length === 1, "the typing notice");
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "ty-1", content: "hello" });
    await waitFor(() => s.fake.typingCalls.length === 2, "the cleared typing notice");
    expect(s.fake.typingCalls).toEqual([
      { roomId: dm, typing: true, timeout: 30_000 },
      { roomId: dm, typing: false },
    ]);
  });

  it("uploads an image as m.image with its mimetype and size", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    const png = join(s.home, "chart.png");
    await writeFile(png, "PNGDATA");
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "img-1", content: "", media: [{ kind: "image", path: png }] });
    expect(s.fake.messages).toHaveLength(1);
    expect(s.fake.messages[0]!.content).toMatchObject({ msgtype: "m.image", body: "chart.png", filename: "chart.png", info: { mimetype: "image/png", size: 7 } });
    expect(s.fake.messages[0]!.file).toEqual({ name: "chart.png", content: "PNGDATA", mimeType: "image/png" });
  });

  it("sends a note instead of a file over maxMediaBytes", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id], maxMediaBytes: 4 });
    const big = join(s.home, "big.txt");
    await writeFile(big, "more than four bytes");
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: dm, id: "big-1", content: "see file", media: [{ kind: "document", path: big }] });
    expect(s.fake.messages.map((m) => m.body)).toEqual(["see file", "[attachment: big.txt - too large]"]);
    expect(s.fake.requests.some((r) => r.path.startsWith("/_matrix/media/v3/upload"))).toBe(false);
  });
});

describe("matrix media in", () => {
  it("notes an attachment over maxMediaBytes instead of downloading it", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id], maxMediaBytes: 4 });
    const url = s.fake.addMedia("huge.pdf", "application/pdf", "0123456789");
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.file", body: "huge.pdf", filename: "huge.pdf", url, info: { mimetype: "application/pdf", size: 10 } });
    const inbound = await nextInbound(s.bus);
    expect(inbound.content).toBe("[attachment: huge.pdf - too large]");
    expect(inbound.media).toBeUndefined();
    expect(s.fake.requests.some((r) => r.path.includes("/download/"))).toBe(false);
  });

  it("falls back to the legacy download path on a homeserver without authenticated media", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] }, { fake: { legacyMediaOnly: true } });
    const url = s.fake.addMedia("notes.txt", "text/plain", "NOTES");
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.file", body: "notes.txt", filename: "notes.txt", url, info: { mimetype: "text/plain", size: 5 } });
    const inbound = await nextInbound(s.bus);
    expect(inbound.media).toHaveLength(1);
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("NOTES");
    const downloads = s.fake.requests.filter((r) => r.path.includes("/download/")).map((r) => r.path.split("/download/")[0]);
    expect(downloads).toEqual(["/_matrix/client/v1/media", "/_matrix/media/v3"]);
  });
});

describe("matrix sync", () => {
  it("reports a failing sync as disconnected with the error, and recovers", async () => {
    const s = await start({ allowFrom: [MATRIX_ALICE.id] });
    await waitFor(() => s.fake.waitingSyncs() > 0, "a waiting long poll");
    // The poll is cut, and the first sync after the SDK's back-off fails too.
    s.fake.failSyncs(1);
    s.fake.dropSyncs();
    await waitFor(() => s.manager.list().find((c) => c.name === "matrix")?.connected === false, "the disconnected status");
    expect(s.manager.list()[0]!.lastError).toMatch(/sync failed/);
    await waitFor(() => s.manager.list()[0]!.connected === true, "the reconnection", 30_000);
    s.fake.userSends(dm, MATRIX_ALICE.id, { msgtype: "m.text", body: "still there?" });
    expect((await nextInbound(s.bus, "the message after the reconnection")).content).toBe("still there?");
    expect(s.fake.unknown).toEqual([]);
  }, 40_000);
});
