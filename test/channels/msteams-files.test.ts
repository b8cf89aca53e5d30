/**
 * Microsoft Teams files out: images inline; other files through the file-consent flow of a
 * personal chat (consent card → the user's accept or decline as a `fileConsent/invoke` → the
 * bytes PUT to the upload URL → a file-info card), and a note naming the file in group chats,
 * where Teams has no consent flow for bots — all against the loopback fake Bot Framework.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { uploadToSession } from "../../src/channels/msteams/file-consent.js";
import { TEAMS_BOT, TEAMS_GROUP_CHAT, TEAMS_TENANT } from "./helpers/fake-msteams.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { msteamsPlatform, startTeams } from "./kit/msteams-platform.js";
import type { TeamsSession } from "./kit/msteams-platform.js";

const { alice } = msteamsPlatform.users;
let session: TeamsSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function startWithPdf(): Promise<{ s: TeamsSession; pdf: string }> {
  session = await startTeams({ allowFrom: [alice.id] });
  const pdf = join(session.home, "report.pdf");
  await writeFile(pdf, "%PDF-1.4 report bytes");
  return { s: session, pdf };
}

function replyWithPdf(s: TeamsSession, chatId: string, pdf: string, id = "files-1"): Promise<void> {
  return s.bus.publishOutbound({
    kind: "message",
    channel: "msteams",
    chatId,
    id,
    content: "here is the report",
    media: [{ kind: "document", path: pdf, name: "report.pdf", mimeType: "application/pdf" }],
  });
}

describe("msteams files in a personal chat", () => {
  it("asks for consent, uploads the bytes to the upload URL once accepted, and shows the file", async () => {
    const { s, pdf } = await startWithPdf();
    await s.userSays(alice, "send me the report", { chat: "dm" });
    await nextInbound(s.bus);
    await replyWithPdf(s, s.dmChat(alice), pdf);
    await waitFor(() => s.sent().some((m) => m.files.length > 0), "the file-info card");
    const [card] = s.fake.files.consentCards;
    expect(card).toMatchObject({ conversationId: s.dmChat(alice), name: "report.pdf", sizeInBytes: 21, answer: "accept", invokeStatus: 200 });
    expect(card!.description).toContain("report.pdf");
    // One range for a small file, without the bot's token (the upload URL is pre-authenticated).
    expect(s.fake.files.uploads).toEqual([{ name: "report.pdf", content: "%PDF-1.4 report bytes", ranges: ["0-20/21"] }]);
    expect(s.sent().map((m) => [m.text, m.files])).toEqual([
      ["here is the report", []],
      ["", [{ name: "report.pdf", content: "%PDF-1.4 report bytes" }]],
    ]);
    // The answered consent card is removed.
    expect(s.fake.messages.find((m) => m.id === card!.activityId)?.deleted).toBe(true);
  });

  it("says the file was not sent when the user declines, and uploads nothing", async () => {
    const { s, pdf } = await startWithPdf();
    s.fake.files.answer = "decline";
    await replyWithPdf(s, s.dmChat(alice), pdf);
    await waitFor(() => s.sent().some((m) => m.text.includes("did not send")), "the decline note");
    expect(s.fake.files.consentCards.map((c) => [c.name, c.answer, c.invokeStatus])).toEqual([["report.pdf", "decline", 200]]);
    expect(s.fake.files.uploads).toEqual([]);
    expect(s.sent().map((m) => m.text)).toEqual(["here is the report", "Okay, I did not send report.pdf."]);
  });

  it("answers a consent for a file it no longer offers (e.g. after a restart) with a note", async () => {
    const { s } = await startWithPdf();
    const status = await s.fake.deliver({
      type: "invoke",
      name: "fileConsent/invoke",
      id: "invoke-stale",
      serviceUrl: s.fake.url,
      channelId: "msteams",
      from: { id: "29:alice", name: "alice", aadObjectId: alice.id },
      conversation: { id: s.dmChat(alice), conversationType: "personal", tenantId: TEAMS_TENANT },
      recipient: { id: TEAMS_BOT.id, name: TEAMS_BOT.name },
      value: { type: "fileUpload", action: "accept", context: { uploadId: "forgotten" }, uploadInfo: { name: "x.pdf", uploadUrl: `${s.fake.url}/upload/none`, contentUrl: `${s.fake.url}/drive/none/x.pdf` } },
    });
    expect(status).toBe(200);
    await waitFor(() => s.sent().length === 1, "the note");
    expect(s.sent()[0]!.text).toBe("That file is no longer available; please ask me again.");
    expect(s.fake.files.uploads).toEqual([]);
  });

  it("still sends images inline, without asking", async () => {
    const { s } = await startWithPdf();
    const png = join(s.home, "cat.png");
    await writeFile(png, "PNG-BYTES");
    await s.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: s.dmChat(alice), id: "img-1", content: "", media: [{ kind: "image", path: png, name: "cat.png" }] });
    expect(s.sent().map((m) => m.files)).toEqual([[{ name: "cat.png", content: "PNG-BYTES" }]]);
    expect(s.fake.files.consentCards).toEqual([]);
  });
});

describe("msteams files in a group chat", () => {
  it("sends a note naming the file instead (no consent flow for bots there)", async () => {
    const { s, pdf } = await startWithPdf();
    await s.userSays(alice, "the report please", { chat: "group", address: "mention" });
    await nextInbound(s.bus);
    await replyWithPdf(s, TEAMS_GROUP_CHAT, pdf);
    expect(s.sent().map((m) => m.text)).toEqual([
      "here is the report",
      "[file not sent: report.pdf - Teams lets a bot send files only in a personal chat; ask me there]",
    ]);
    expect(s.fake.files.consentCards).toEqual([]);
  });
});

describe("msteams upload sessions", () => {
  it("PUTs a file in consecutive Content-Range pieces, and fails with the status when the session refuses", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    const url = session.fake.files.openUploadSession("notes.txt");
    await uploadToSession(url, Buffer.from("0123456789abcdefghij"), { rangeBytes: 8 });
    expect(session.fake.files.uploads).toEqual([{ name: "notes.txt", content: "0123456789abcdefghij", ranges: ["0-7/20", "8-15/20", "16-19/20"] }]);
    // The session is complete: another PUT is refused (404), and the error carries the status.
    await expect(uploadToSession(url, Buffer.from("again"))).rejects.toMatchObject({ statusCode: 404 });
  });
});
