/**
 * WeChat's typing indicator: `getconfig` hands out a per-user typing ticket (cached up to a
 * day, with a doubling back-off from 2 s to an hour after a refusal), `sendtyping` shows it
 * (status 1) or clears it (status 2). Kept alive every 5 s while the agent works.
 */
import type { ChannelClock } from "../clock.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import { checkBody } from "./api.js";
import type { WeixinApi } from "./api.js";
import type { WeixinSession } from "./session.js";

const TYPING = 1;
const CANCEL = 2;
const TICKET_TTL_S = 24 * 60 * 60;
const FIRST_RETRY_S = 2;
const MAX_RETRY_S = 60 * 60;
export const TYPING_REFRESH_MS = 5000;

export class WeixinTyping {
  private readonly keeper: TypingKeeper;

  constructor(
    private readonly api: WeixinApi,
    private readonly session: WeixinSession,
    private readonly clock: ChannelClock,
  ) {
    this.keeper = new TypingKeeper({ clock, refreshMs: TYPING_REFRESH_MS, send: (chatId) => this.send(chatId, TYPING) });
  }

  /** Starts the indicator for `chatId`; failures only mean no indicator. */
  async start(chatId: string): Promise<void> {
    await this.keeper.start(chatId).catch(() => undefined);
  }

  /** Stops the keep-alive and clears the indicator in the chat. */
  async stop(chatId: string): Promise<void> {
    this.keeper.stop(chatId);
    if (this.session.tickets[chatId]?.ticket) await this.send(chatId, CANCEL).catch(() => undefined);
  }

  stopAll(): void {
    this.keeper.stopAll();
  }

  private async send(chatId: string, status: number): Promise<void> {
    const ticket = await this.ticket(chatId);
    if (!ticket) return;
    checkBody("sendtyping", await this.api.post("ilink/bot/sendtyping", { ilink_user_id: chatId, typing_ticket: ticket, status }, { timeoutMs: 10_000 }));
  }

  private async ticket(chatId: string): Promise<string> {
    const now = this.clock.now() / 1000;
    const entry = this.session.tickets[chatId];
    if (entry && now < entry.next_fetch_at) return entry.ticket;
    const contextToken = this.session.contextToken(chatId);
    const body = await this.api.post("ilink/bot/getconfig", { ilink_user_id: chatId, context_token: contextToken || null }, { timeoutMs: 10_000 }).catch(() => ({ ret: -1 }));
    if (Number(body.ret ?? 0) === 0 && Number((body as { errcode?: unknown }).errcode ?? 0) === 0) {
      const ticket = String((body as { typing_ticket?: unknown }).typing_ticket ?? "");
      this.session.tickets[chatId] = { ticket, ever_succeeded: true, next_fetch_at: now + TICKET_TTL_S, retry_delay_s: FIRST_RETRY_S };
      return ticket;
    }
    const delay = entry ? Math.min(entry.retry_delay_s * 2, MAX_RETRY_S) : FIRST_RETRY_S;
    this.session.tickets[chatId] = { ticket: entry?.ticket ?? "", ever_succeeded: entry?.ever_succeeded ?? false, next_fetch_at: now + delay, retry_delay_s: delay };
    return entry?.ticket ?? "";
  }
}
