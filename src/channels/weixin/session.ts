/**
 * What the WeChat channel keeps between requests: the bot token in use, the getupdates cursor,
 * each user's latest context token (WeChat lets a bot write to a user only under the token of
 * one of their messages, and only a few times per token), typing tickets, and their
 * persistence in account.json. A login that stored a newer token is never overwritten.
 */
import type { ChannelClock } from "../clock.js";
import { WeixinQuotaError } from "./api.js";
import { effectiveToken, loadAccount, saveAccount, tokenFingerprint } from "./state.js";
import type { TypingTicket, WeixinAccount } from "./state.js";

export interface WeixinSessionOptions {
  stateDir: string;
  configToken: string;
  configBaseUrl: string;
  /** Messages allowed per context token (`contextMessageBudget`). */
  budget: number;
  clock: ChannelClock;
}

export class WeixinSession {
  token = "";
  baseUrl: string;
  cursor = "";
  private contexts: Record<string, string> = {};
  private readonly contextAt = new Map<string, number>();
  private readonly sendCounts = new Map<string, number>();
  tickets: Record<string, TypingTicket> = {};
  private replacedHash = "";
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly options: WeixinSessionOptions) {
    this.baseUrl = options.configBaseUrl;
  }

  /** Loads account.json; false when there is no token to run with. */
  async load(): Promise<boolean> {
    const account = await loadAccount(this.options.stateDir);
    const token = effectiveToken(this.options.configToken, account);
    if (!token) return false;
    this.token = token;
    if (account && account.token === token) {
      this.cursor = account.get_updates_buf;
      this.contexts = account.context_tokens;
      this.tickets = account.typing_tickets;
      this.replacedHash = account.replaced_config_token_sha256 ?? "";
      if (account.base_url) this.baseUrl = account.base_url;
    }
    return true;
  }

  /** After a stale-token answer: whether account.json now holds a different (newer) token. */
  async reloadReplacement(): Promise<boolean> {
    const previous = this.token;
    const account = await loadAccount(this.options.stateDir);
    const token = effectiveToken(this.options.configToken, account);
    if (!token || token === previous) return false;
    this.token = token;
    this.cursor = account?.get_updates_buf ?? "";
    if (account?.base_url) this.baseUrl = account.base_url;
    return true;
  }

  contextToken(chatId: string): string {
    return this.contexts[chatId] ?? "";
  }

  /** Milliseconds since the chat's context token arrived (Infinity for one loaded from disk). */
  contextAge(chatId: string): number {
    const at = this.contextAt.get(chatId);
    return at === undefined ? Number.POSITIVE_INFINITY : this.options.clock.now() - at;
  }

  /** Records the context token of a message; a new token starts a fresh budget. */
  setContextToken(chatId: string, token: string): boolean {
    const changed = this.contexts[chatId] !== token;
    this.contexts[chatId] = token;
    this.contextAt.set(chatId, this.options.clock.now());
    if (changed) this.sendCounts.set(token, 0);
    return changed;
  }

  /** Throws a quota error when one more message (plus `reserve`) would exceed the budget. */
  checkBudget(contextToken: string, reserve = 0): void {
    const used = this.sendCounts.get(contextToken) ?? 0;
    if (used + 1 + reserve <= this.options.budget) return;
    throw new WeixinQuotaError("sendmessage", "nanobot's per-context budget (contextMessageBudget) is used up; waiting for the user to write again", { retryable: false });
  }

  recordSend(contextToken: string): void {
    this.sendCounts.set(contextToken, (this.sendCounts.get(contextToken) ?? 0) + 1);
  }

  /** Stores a QR login's token (replacing the configured one only if it differs). */
  commitLogin(token: string, baseUrl: string): Promise<void> {
    this.token = token;
    this.cursor = "";
    if (baseUrl) this.baseUrl = baseUrl;
    const configToken = this.options.configToken;
    this.replacedHash = configToken && configToken !== token ? tokenFingerprint(configToken) : "";
    return this.save(true);
  }

  /** Writes account.json; without `force`, a newer token a login stored meanwhile is kept. */
  save(force = false): Promise<void> {
    const run = async (): Promise<void> => {
      if (!force) {
        const stored = await loadAccount(this.options.stateDir);
        const configToken = this.options.configToken;
        const configWins = Boolean(configToken) && this.token === configToken && stored?.replaced_config_token_sha256 !== tokenFingerprint(configToken);
        if (stored?.token && stored.token !== this.token && !configWins) return;
      }
      const account: WeixinAccount = { token: this.token, get_updates_buf: this.cursor, context_tokens: this.contexts, typing_tickets: this.tickets, base_url: this.baseUrl };
      if (this.replacedHash) account.replaced_config_token_sha256 = this.replacedHash;
      await saveAccount(this.options.stateDir, account);
    };
    this.saving = this.saving.then(run, run);
    return this.saving;
  }
}
