/**
 * Matrix end-to-end encryption (`e2eeEnabled`): the "user" is a second matrix-js-sdk client with
 * Rust crypto on the same fake homeserver. Messages in an encrypted room reach the agent
 * decrypted, the bot's replies, edits and files reach the user encrypted (the homeserver only
 * ever holds ciphertext), and a message the bot cannot decrypt is logged and answered with a notice.
 */
import { webcrypto } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { encryptAttachment } from "../../src/channels/matrix/attachment-crypto.js";
import type { Logger } from "../../src/core/logger.js";
import { MATRIX_BOT, MATRIX_PASSWORD } from "./helpers/fake-matrix.js";
import type { Json, MatrixEventJson } from "./helpers/fake-matrix.js";
import { nextInbound, tempHome, waitFor } from "./helpers/harness.js";
import { startUserClient } from "./helpers/matrix-user-client.js";
import type { MatrixUserClient } from "./helpers/matrix-user-client.js";
import { MATRIX_ALICE, MATRIX_BOB, matrixDmRoom, startMatrix } from "./kit/matrix-platform.js";
import type { MatrixSession, StartMatrixOptions } from "./kit/matrix-platform.js";

const SECRET_ROOM = "!secret:fake.test";

// Two Rust crypto machines (WASM) per test: the first start in a worker is slow on a busy machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

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

let session: MatrixSession | undefined;
let alice: MatrixUserClient | undefined;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  alice?.stop();
  alice = undefined;
  await session?.close();
  session = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The bot and Alice in an encrypted room of two; both devices have published their keys. */
async function startEncrypted(config: Record<string, unknown> = {}, options: StartMatrixOptions = {}): Promise<{ s: MatrixSession; alice: MatrixUserClient; logs: LogLine[] }> {
  const logs: LogLine[] = [];
  session = await startMatrix(
    { allowFrom: [MATRIX_ALICE.id], ...config },
    {
      logger: captureLogger(logs),
      ...options,
      before: (fake) => {
        fake.addRoom(SECRET_ROOM, [MATRIX_ALICE.id, MATRIX_BOT.id], undefined, { encrypted: true });
        options.before?.(fake);
      },
    },
  );
  const s = session;
  await waitFor(() => s.fake.keys.devices(MATRIX_BOT.id).length > 0, "the bot's device keys uploaded");
  alice = await startUserClient(s.fake, MATRIX_ALICE.id);
  return { s, alice, logs };
}

/** What the homeserver stored for the room, as one string: no plaintext may appear in it. */
function stored(s: MatrixSession): string {
  return JSON.stringify(s.fake.roomEvents(SECRET_ROOM));
}

function botEvents(s: MatrixSession): MatrixEventJson[] {
  return s.fake.roomEvents(SECRET_ROOM).filter((e) => e.sender === MATRIX_BOT.id && e.state_key === undefined);
}

/** AES-256-CTR through WebCrypto, independently of the channel's own attachment code. */
async function webDecrypt(ciphertext: Uint8Array, file: { key: { k: string }; iv: string }): Promise<string> {
  const key = await webcrypto.subtle.importKey("jwk", { kty: "oct", k: file.key.k, alg: "A256CTR", ext: true, key_ops: ["decrypt"] }, { name: "AES-CTR" }, false, ["decrypt"]);
  const plain = await webcrypto.subtle.decrypt({ name: "AES-CTR", counter: Buffer.from(file.iv, "base64"), length: 64 }, key, ciphertext);
  return Buffer.from(plain).toString("utf8");
}

describe("matrix end-to-end encryption: the user's encrypted DM", () => {
  it("reaches the agent decrypted, and the reply reaches the user encrypted", async () => {
    const { s, alice } = await startEncrypted();
    const asked = await alice.send(SECRET_ROOM, { msgtype: "m.text", body: "what is the launch code?" });
    const inbound = await nextInbound(s.bus, "the decrypted question", 15_000);
    expect(inbound).toMatchObject({ chatId: SECRET_ROOM, content: "what is the launch code?", senderId: MATRIX_ALICE.id });
    expect(s.fake.roomEvents(SECRET_ROOM).find((e) => e.event_id === asked)).toMatchObject({ type: "m.room.encrypted", content: { algorithm: "m.megolm.v1.aes-sha2" } });

    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: SECRET_ROOM, id: "r1", content: "It is **0000**.", replyTo: asked });
    const shown = await alice.waitShown("the bot's reply", (m) => m.sender === MATRIX_BOT.id);
    expect(shown.wireType).toBe("m.room.encrypted");
    expect(shown.content).toMatchObject({ msgtype: "m.text", body: "It is **0000**.", formatted_body: "<p>It is <strong>0000</strong>.</p>" });
    expect((shown.content["m.relates_to"] as Json)["m.in_reply_to"]).toEqual({ event_id: asked });
    expect(botEvents(s).map((e) => e.type)).toEqual(["m.room.encrypted"]);
    expect(stored(s)).not.toMatch(/launch code|0000/);
    // The room key went to Alice's device as an Olm-encrypted to-device message.
    expect(s.fake.keys.toDeviceLog).toContainEqual({ type: "m.room.encrypted", sender: MATRIX_BOT.id, to: `${MATRIX_ALICE.id}/${alice.deviceId}` });
  });

  it("streams by encrypted edits whose relation stays readable to the homeserver", async () => {
    const { s, alice } = await startEncrypted({ streaming: true });
    await alice.send(SECRET_ROOM, { msgtype: "m.text", body: "count" });
    await nextInbound(s.bus, "the question", 15_000);
    await s.bus.publishOutbound({ kind: "delta", channel: "matrix", chatId: SECRET_ROOM, streamId: "st1", delta: "one" });
    const first = await alice.waitShown("the preview", (m) => m.sender === MATRIX_BOT.id);
    await s.bus.publishOutbound({ kind: "stream_end", channel: "matrix", chatId: SECRET_ROOM, streamId: "st1", id: "r2", content: "one two three" });
    const edit = await alice.waitShown("the final edit", (m) => (m.content["m.relates_to"] as Json | undefined)?.rel_type === "m.replace");
    expect(first.content.body).toBe("one");
    expect(edit.content["m.new_content"]).toMatchObject({ body: "one two three" });
    const wire = botEvents(s).at(-1)!;
    expect(wire).toMatchObject({ type: "m.room.encrypted", content: { "m.relates_to": { rel_type: "m.replace", event_id: first.eventId } } });
    expect(stored(s)).not.toMatch(/one two three/);
  });
});

describe("matrix end-to-end encryption: attachments", () => {
  it("sends a file encrypted (the user decrypts it with the key from the message)", async () => {
    const { s, alice } = await startEncrypted();
    const home = await tempHome();
    cleanups.push(home.cleanup);
    const path = join(home.dir, "report.txt");
    await writeFile(path, "quarterly secret numbers");
    await s.bus.publishOutbound({ kind: "message", channel: "matrix", chatId: SECRET_ROOM, id: "f1", content: "", media: [{ kind: "document", path }] });
    const shown = await alice.waitShown("the file", (m) => m.content.msgtype === "m.file");
    expect(shown.content).toMatchObject({ body: "report.txt", filename: "report.txt", info: { mimetype: "text/plain" } });
    expect(shown.content.url).toBeUndefined();
    const file = shown.content.file as { url: string; key: { k: string }; iv: string; hashes: { sha256: string } };
    const ciphertext = await alice.download(file.url);
    expect(Buffer.from(ciphertext).toString("utf8")).not.toContain("quarterly");
    expect(await webDecrypt(ciphertext, file)).toBe("quarterly secret numbers");
  });

  it("receives the user's encrypted file decrypted into the media folder", async () => {
    const { s, alice } = await startEncrypted();
    const { ciphertext, file } = encryptAttachment(Buffer.from("the plan, in full"));
    const url = s.fake.addMedia("", "application/octet-stream", ciphertext);
    await alice.send(SECRET_ROOM, { msgtype: "m.file", body: "plan.txt", filename: "plan.txt", info: { mimetype: "text/plain", size: 17 }, file: { ...file, url } });
    const inbound = await nextInbound(s.bus, "the file", 15_000);
    expect(inbound.media).toEqual([expect.objectContaining({ kind: "document", name: "plan.txt", mimeType: "text/plain" })]);
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("the plan, in full");
  });
});

describe("matrix end-to-end encryption: what the bot cannot decrypt", () => {
  it("logs the failure and tells the sender in an encrypted notice, once per room key", async () => {
    const { s, alice, logs } = await startEncrypted();
    const bogus = { algorithm: "m.megolm.v1.aes-sha2", sender_key: "x", ciphertext: "AwgAEnAw", session_id: "nosuchsession", device_id: alice.deviceId };
    s.fake.userSends(SECRET_ROOM, MATRIX_ALICE.id, bogus, "m.room.encrypted");
    const notice = await alice.waitShown("the notice", (m) => m.sender === MATRIX_BOT.id);
    expect(notice.wireType).toBe("m.room.encrypted");
    expect(notice.content).toMatchObject({ msgtype: "m.notice", body: expect.stringMatching(/could not decrypt your message/) });
    expect(logs).toContainEqual(expect.objectContaining({ level: "warn", msg: "matrix message could not be decrypted", data: expect.objectContaining({ sender: MATRIX_ALICE.id }) }));
    // A second message under the same unknown key: logged again, no second notice.
    s.fake.userSends(SECRET_ROOM, MATRIX_ALICE.id, bogus, "m.room.encrypted");
    await waitFor(() => logs.filter((l) => l.msg === "matrix message could not be decrypted").length === 2, "the second failure logged");
    await alice.send(SECRET_ROOM, { msgtype: "m.text", body: "and this one?" });
    expect((await nextInbound(s.bus, "the readable message", 15_000)).content).toBe("and this one?");
    expect(alice.shown.filter((m) => m.sender === MATRIX_BOT.id)).toHaveLength(1);
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("in an encrypted group room, only logs it (no notice to people who did not address the bot)", async () => {
    const group = "!secretgroup:fake.test";
    const { s, alice, logs } = await startEncrypted({}, { before: (fake) => fake.addRoom(group, [MATRIX_ALICE.id, MATRIX_BOT.id, MATRIX_BOB], "Secret team", { encrypted: true }) });
    s.fake.userSends(group, MATRIX_ALICE.id, { algorithm: "m.megolm.v1.aes-sha2", sender_key: "x", ciphertext: "AwgAEnAw", session_id: "nope", device_id: alice.deviceId }, "m.room.encrypted");
    await waitFor(() => logs.some((l) => l.msg === "matrix message could not be decrypted" && l.data?.room === group), "the log line");
    await alice.send(group, { msgtype: "m.text", body: "readable group message" });
    expect((await nextInbound(s.bus, "the readable group message", 15_000)).content).toBe("readable group message");
    expect(s.fake.roomEvents(group).filter((e) => e.sender === MATRIX_BOT.id && e.state_key === undefined)).toEqual([]);
  });

  it("answers a message once its room key arrives late, after the notice", async () => {
    const { s, alice, logs } = await startEncrypted();
    s.fake.keys.holdToDevice(MATRIX_BOT.id);
    await alice.send(SECRET_ROOM, { msgtype: "m.text", body: "slow key" });
    await alice.waitShown("the notice", (m) => m.sender === MATRIX_BOT.id && m.content.msgtype === "m.notice");
    expect(logs).toContainEqual(expect.objectContaining({ msg: "matrix message could not be decrypted" }));
    expect(s.bus.inboundSize()).toBe(0);
    s.fake.keys.releaseToDevice();
    expect((await nextInbound(s.bus, "the late-decrypted message", 15_000)).content).toBe("slow key");
  });

  it("with e2eeEnabled false, loads no crypto and says encrypted rooms cannot be read", async () => {
    const logs: LogLine[] = [];
    session = await startMatrix(
      { allowFrom: [MATRIX_ALICE.id], e2eeEnabled: false },
      { logger: captureLogger(logs), before: (fake) => fake.addRoom(SECRET_ROOM, [MATRIX_ALICE.id, MATRIX_BOT.id], undefined, { encrypted: true }) },
    );
    session.fake.userSends(SECRET_ROOM, MATRIX_ALICE.id, { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "AwgA", session_id: "s", device_id: "D" }, "m.room.encrypted");
    await waitFor(() => logs.some((l) => l.msg.startsWith("matrix encrypted room: nanobot cannot read it")), "the warning");
    expect(session.fake.keys.devices(MATRIX_BOT.id)).toEqual([]);
    expect(session.fake.requests.some((r) => r.path.includes("/keys/"))).toBe(false);
  });
});

describe("matrix end-to-end encryption: the device", () => {
  it("with a password login, replaces the previous start's device (its keys are gone) by a new one", async () => {
    const home = await tempHome();
    cleanups.push(home.cleanup);
    const first = await startMatrix({ password: MATRIX_PASSWORD }, { noToken: true, home: home.dir });
    await waitFor(() => first.fake.keys.devices(MATRIX_BOT.id).length === 1, "the first device's keys");
    session = first;
    // A restart over the same home and homeserver: the kept session's device is logged out.
    await first.manager.stopAll();
    const again = await first.manager.startAll();
    expect(again[0]?.ok).toBe(true);
    await waitFor(() => first.fake.keys.devices(MATRIX_BOT.id).length === 1 && first.fake.loggedOut.length === 1, "the old device logged out, the new one keyed");
    expect(first.fake.loggedOut).toEqual(["LOGIN1"]);
    expect(first.fake.keys.devices(MATRIX_BOT.id)).toEqual(["LOGIN2"]);
    expect(first.fake.logins).toBe(2);
  });

  it("with an access token whose device already published keys, leaves them alone and says why encryption is off", async () => {
    const logs: LogLine[] = [];
    session = await startMatrix({ allowFrom: [MATRIX_ALICE.id] }, {
      logger: captureLogger(logs),
      before: (fake) => {
        const keys = { user_id: MATRIX_BOT.id, device_id: "NANOBOTDEVICE", algorithms: [], keys: { "ed25519:NANOBOTDEVICE": "old" }, signatures: {} };
        fake.keys.handle("POST", "/keys/upload", { device_keys: keys }, { userId: MATRIX_BOT.id, deviceId: "NANOBOTDEVICE", token: "earlier" });
      },
    });
    expect(logs).toContainEqual({
      level: "warn",
      msg: "matrix end-to-end encryption could not start; encrypted rooms cannot be read",
      data: { error: expect.stringMatching(/^device NANOBOTDEVICE already has published keys .* use "password" login/) },
    });
    expect(session.fake.requests.filter((r) => r.path.endsWith("/keys/upload"))).toEqual([]);
    // Unencrypted rooms still work.
    session.fake.userSends(matrixDmRoom(MATRIX_ALICE), MATRIX_ALICE.id, { msgtype: "m.text", body: "plain hello" });
    expect((await nextInbound(session.bus)).content).toBe("plain hello");
  });
});
