/**
 * `<stateDir>/account.json`, in the Python nanobot's shape so either can pick up the other's
 * login: the bot token, the getupdates cursor, the last context token per user, typing tickets,
 * the API base the login landed on, and — when a QR login replaced a token written in the
 * config — the SHA-256 of that configured token (so a later manual edit wins again).
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { readJsonFile, writeJsonFileAtomic } from "../json-file.js";

export interface TypingTicket {
  ticket: string;
  ever_succeeded: boolean;
  /** Epoch seconds. */
  next_fetch_at: number;
  retry_delay_s: number;
}

export interface WeixinAccount {
  token: string;
  get_updates_buf: string;
  context_tokens: Record<string, string>;
  typing_tickets: Record<string, TypingTicket>;
  base_url: string;
  replaced_config_token_sha256?: string;
}

export function accountPath(stateDir: string): string {
  return join(stateDir, "account.json");
}

export function tokenFingerprint(token: string): string {
  return token ? createHash("sha256").update(token).digest("hex") : "";
}

function strings(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([k, v]) => k.trim() && typeof v === "string" && v.trim()) as Array<[string, string]>);
}

/** The stored account, or undefined when there is none (or it cannot be read). */
export async function loadAccount(stateDir: string): Promise<WeixinAccount | undefined> {
  let raw: unknown;
  try {
    raw = await readJsonFile(accountPath(stateDir));
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const data = raw as Record<string, unknown>;
  const tickets = typeof data.typing_tickets === "object" && data.typing_tickets !== null ? (data.typing_tickets as Record<string, TypingTicket>) : {};
  const account: WeixinAccount = {
    token: typeof data.token === "string" ? data.token : "",
    get_updates_buf: typeof data.get_updates_buf === "string" ? data.get_updates_buf : "",
    context_tokens: strings(data.context_tokens),
    typing_tickets: Object.fromEntries(Object.entries(tickets).filter(([, t]) => typeof t === "object" && t !== null)),
    base_url: typeof data.base_url === "string" ? data.base_url : "",
  };
  if (typeof data.replaced_config_token_sha256 === "string" && data.replaced_config_token_sha256) account.replaced_config_token_sha256 = data.replaced_config_token_sha256;
  return account;
}

export async function saveAccount(stateDir: string, account: WeixinAccount): Promise<void> {
  await writeJsonFileAtomic(accountPath(stateDir), account);
}

/**
 * The token the channel runs with: the configured one, unless a QR login replaced exactly that
 * token (then the stored one); without a configured token, the stored one.
 */
export function effectiveToken(configToken: string, account: WeixinAccount | undefined): string {
  if (!configToken) return account?.token ?? "";
  if (account?.token && account.replaced_config_token_sha256 === tokenFingerprint(configToken)) return account.token;
  return configToken;
}
