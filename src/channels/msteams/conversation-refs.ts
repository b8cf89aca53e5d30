/**
 * What the bot must remember to write into a Teams conversation: the Bot Connector's
 * serviceUrl (per region and tenant), the last user activity (for threaded replies) and the
 * conversation kind. Kept in `<home>/state/<channel>-conversations.json` so replies, cron
 * messages and answers after a restart reach chats seen earlier — pruned as the Python nanobot
 * does: older than `refTtlDays`, Web Chat conversations (`pruneWebChatRefs`), untrusted
 * serviceUrls, and group/channel chats are never written to disk with `pruneNonPersonalRefs`.
 */
import { join } from "node:path";
import { readJsonFile, writeJsonFileAtomic } from "../json-file.js";

export interface ConversationRef {
  serviceUrl: string;
  conversationId: string;
  /** The last user activity in the conversation. */
  activityId?: string;
  conversationType?: string;
  tenantId?: string;
  /** Epoch ms of the last use. */
  updatedAt: number;
}

export interface ConversationRefOptions {
  home: string;
  channel: string;
  ttlDays: number;
  pruneWebChat: boolean;
  pruneNonPersonal: boolean;
  touchIntervalMs: number;
  isTrusted: (serviceUrl: string) => boolean;
  now: () => number;
}

const WEBCHAT_HOST = "webchat.botframework.com";

export function isWebChat(serviceUrl: string): boolean {
  try {
    const host = new URL(serviceUrl).hostname.toLowerCase();
    return host === WEBCHAT_HOST || host.endsWith(`.${WEBCHAT_HOST}`);
  } catch {
    return false;
  }
}

export class ConversationRefs {
  readonly path: string;
  private readonly refs = new Map<string, ConversationRef>();
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly options: ConversationRefOptions) {
    this.path = join(options.home, "state", `${options.channel}-conversations.json`);
  }

  async load(): Promise<void> {
    const raw = await readJsonFile(this.path).catch(() => undefined);
    if (typeof raw !== "object" || raw === null) return;
    for (const [id, value] of Object.entries(raw as Record<string, unknown>)) {
      if (typeof value !== "object" || value === null) continue;
      const v = value as Record<string, unknown>;
      if (typeof v.serviceUrl !== "string" || typeof v.conversationId !== "string") continue;
      const ref: ConversationRef = { serviceUrl: v.serviceUrl, conversationId: v.conversationId, updatedAt: typeof v.updatedAt === "number" ? v.updatedAt : 0 };
      if (typeof v.activityId === "string") ref.activityId = v.activityId;
      if (typeof v.conversationType === "string") ref.conversationType = v.conversationType;
      if (typeof v.tenantId === "string") ref.tenantId = v.tenantId;
      if (this.keep(ref, true)) this.refs.set(id, ref);
    }
  }

  get(conversationId: string): ConversationRef | undefined {
    const ref = this.refs.get(conversationId);
    if (ref && !this.keep(ref, false)) {
      this.refs.delete(conversationId);
      return undefined;
    }
    return ref;
  }

  /** Records the conversation of an inbound activity and writes the file. */
  async remember(ref: Omit<ConversationRef, "updatedAt">): Promise<void> {
    const full = { ...ref, updatedAt: this.options.now() };
    if (!this.keep(full, false)) return;
    this.refs.set(ref.conversationId, full);
    await this.save();
  }

  /** Marks a reference used; written back at most every `refTouchIntervalS`. */
  async touch(conversationId: string): Promise<void> {
    const ref = this.refs.get(conversationId);
    if (!ref) return;
    const now = this.options.now();
    if (this.options.touchIntervalMs > 0 && now - ref.updatedAt < this.options.touchIntervalMs) return;
    ref.updatedAt = now;
    await this.save();
  }

  private keep(ref: ConversationRef, fromDisk: boolean): boolean {
    if (!this.options.isTrusted(ref.serviceUrl)) return false;
    if (this.options.pruneWebChat && isWebChat(ref.serviceUrl)) return false;
    if (fromDisk && this.options.pruneNonPersonal && ref.conversationType && ref.conversationType !== "personal") return false;
    return this.options.now() - ref.updatedAt <= this.options.ttlDays * 86_400_000;
  }

  private save(): Promise<void> {
    const next = this.writing.then(async () => {
      const out: Record<string, ConversationRef> = {};
      for (const [id, ref] of this.refs) {
        if (this.options.pruneNonPersonal && ref.conversationType && ref.conversationType !== "personal") continue;
        out[id] = ref;
      }
      await writeJsonFileAtomic(this.path, out);
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}
