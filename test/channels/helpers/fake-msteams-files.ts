/**
 * The file half of the fake Teams: what the Teams client and the user's OneDrive do when a bot
 * sends a file-consent card (`application/vnd.microsoft.teams.card.file.consent`). The fake
 * user answers the card (accept, decline, or not at all); an accept comes to the bot as a
 * `fileConsent/invoke` activity whose `uploadInfo.uploadUrl` is an upload session here, which
 * takes the bytes in `Content-Range` pieces as OneDrive does; a file-info card
 * (`application/vnd.microsoft.teams.card.file.info`) then names the uploaded file by its
 * `contentUrl`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export const CONSENT_CARD = "application/vnd.microsoft.teams.card.file.consent";
export const FILE_INFO_CARD = "application/vnd.microsoft.teams.card.file.info";

export type ConsentAnswer = "accept" | "decline" | "ignore";

/** A consent card the bot sent, and what came of it. */
export interface TeamsConsentCard {
  activityId: string;
  conversationId: string;
  name: string;
  sizeInBytes: number;
  description: string;
  answer?: Exclude<ConsentAnswer, "ignore">;
  /** The bot's HTTP status for the `fileConsent/invoke` activity. */
  invokeStatus?: number;
}

/** A file the bot finished uploading to an upload session. */
export interface TeamsUpload {
  name: string;
  content: string;
  /** The PUTs it took (one per range). */
  ranges: string[];
}

interface Session {
  name: string;
  received: Buffer[];
  size: number;
  ranges: string[];
  done: boolean;
}

export interface TeamsFileSide {
  consentCards: TeamsConsentCard[];
  uploads: TeamsUpload[];
  /** How the fake user answers the next consent cards (default accept). */
  answer: ConsentAnswer;
  /** Opens an upload session as an accepted card would; resolves to its upload URL. */
  openUploadSession(name: string): string;
  /** Called for each consent card the bot posted; answers it the way `answer` says. */
  onConsentCard(card: Record<string, unknown>, activityId: string, conversationId: string): void;
  /** The uploaded file a file-info card points at. */
  fileFor(attachment: Record<string, unknown>): { name: string; content: string; contentType: string } | undefined;
  /** Serves upload-session PUTs and downloads; false when the request is not one of them. */
  handle(method: string, path: string, req: IncomingMessage, raw: Buffer, res: ServerResponse): boolean;
}

export interface FileSideOptions {
  url: string;
  /** Delivers an activity to the bot (as the Connector); resolves to the HTTP status. */
  deliver: (activity: Record<string, unknown>) => Promise<number>;
  /** The activity fields that place an invoke in a conversation (from, conversation, …). */
  addressOf: (conversationId: string) => Record<string, unknown>;
}

export function fakeTeamsFiles(options: FileSideOptions): TeamsFileSide {
  const sessions = new Map<string, Session>();
  const consentCards: TeamsConsentCard[] = [];
  const uploads: TeamsUpload[] = [];
  let seq = 0;

  function openSession(name: string): string {
    const sessionId = `upload-${++seq}`;
    sessions.set(sessionId, { name, received: [], size: 0, ranges: [], done: false });
    return sessionId;
  }

  function invoke(card: TeamsConsentCard, content: Record<string, unknown>, action: "accept" | "decline"): Promise<number> {
    const context = (action === "accept" ? content.acceptContext : content.declineContext) as unknown;
    let uploadInfo: Record<string, unknown> | undefined;
    if (action === "accept") {
      const sessionId = openSession(card.name);
      uploadInfo = {
        contentUrl: `${options.url}/drive/${sessionId}/${encodeURIComponent(card.name)}`,
        name: card.name,
        uploadUrl: `${options.url}/upload/${sessionId}`,
        uniqueId: sessionId,
        fileType: card.name.split(".").pop() ?? "",
      };
    }
    return options.deliver({
      type: "invoke",
      name: "fileConsent/invoke",
      id: `invoke-${++seq}`,
      timestamp: new Date().toISOString(),
      replyToId: card.activityId,
      ...options.addressOf(card.conversationId),
      value: { type: "fileUpload", action, context, ...(uploadInfo ? { uploadInfo } : {}) },
    });
  }

  const side: TeamsFileSide = {
    consentCards,
    uploads,
    answer: "accept",
    openUploadSession: (name) => `${options.url}/upload/${openSession(name)}`,
    onConsentCard(attachment, activityId, conversationId) {
      const content = (attachment.content ?? {}) as Record<string, unknown>;
      const card: TeamsConsentCard = {
        activityId,
        conversationId,
        name: String(attachment.name ?? ""),
        sizeInBytes: Number(content.sizeInBytes ?? 0),
        description: String(content.description ?? ""),
      };
      consentCards.push(card);
      const answer = side.answer;
      if (answer === "ignore") return;
      card.answer = answer;
      // The user clicks after the card is shown: after the bot got its 201.
      setImmediate(() => {
        invoke(card, content, answer).then(
          (status) => (card.invokeStatus = status),
          () => (card.invokeStatus = 0),
        );
      });
    },
    fileFor(attachment) {
      if (attachment.contentType !== FILE_INFO_CARD || typeof attachment.contentUrl !== "string") return undefined;
      const match = /\/drive\/([^/]+)\//.exec(attachment.contentUrl);
      const session = match ? sessions.get(match[1]!) : undefined;
      if (!session?.done) return undefined;
      return { name: String(attachment.name ?? session.name), content: Buffer.concat(session.received).toString("utf8"), contentType: FILE_INFO_CARD };
    },
    handle(method, path, req, raw, res) {
      const upload = /^\/upload\/([^/]+)$/.exec(path);
      if (method === "PUT" && upload) {
        const session = sessions.get(upload[1]!);
        if (!session || session.done) return reply(res, 404, { error: { code: "itemNotFound" } });
        if (req.headers.authorization) return reply(res, 400, { error: { code: "invalidRequest", message: "the upload URL is pre-authenticated: no Authorization header" } });
        const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(req.headers["content-range"] ?? ""));
        if (!range) return reply(res, 400, { error: { code: "invalidRequest", message: "Content-Range required" } });
        const [start, end, total] = [Number(range[1]), Number(range[2]), Number(range[3])];
        if (start !== session.size || end - start + 1 !== raw.length || end >= total) {
          return reply(res, 416, { error: { code: "invalidRange" }, nextExpectedRanges: [`${session.size}-`] });
        }
        session.received.push(raw);
        session.size += raw.length;
        session.ranges.push(`${start}-${end}/${total}`);
        if (session.size < total) return reply(res, 202, { nextExpectedRanges: [`${session.size}-`] });
        session.done = true;
        uploads.push({ name: session.name, content: Buffer.concat(session.received).toString("utf8"), ranges: session.ranges });
        return reply(res, 201, { id: upload[1], name: session.name, size: session.size });
      }
      const download = /^\/drive\/([^/]+)\//.exec(path);
      if (method === "GET" && download) {
        const session = sessions.get(download[1]!);
        if (!session?.done) return reply(res, 404, { error: { code: "itemNotFound" } });
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(Buffer.concat(session.received));
        return true;
      }
      return false;
    },
  };
  return side;
}

function reply(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
  return true;
}
