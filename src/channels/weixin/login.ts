/**
 * The WeChat QR login: `get_bot_qrcode` hands out a code (shown to the user), `get_qrcode_status`
 * is polled until the phone confirms it, and the bot token it then returns is stored in
 * account.json, where the channel reads it. Along the way the server may move the poll to
 * another host (`scaned_but_redirect`), ask for the number shown on the phone
 * (`need_verifycode`), let the code expire (a new one, up to 3 times) or report the account
 * already bound (`binded_redirect`: the stored login stays, unless `force` asked for a new one).
 */
import { WeixinApi, ERR_INVALID_ARGUMENT, WeixinApiError, checkBody } from "./api.js";
import { WeixinSession } from "./session.js";
import { loadAccount } from "./state.js";
import { systemClock } from "../clock.js";

const MAX_QR_REFRESH = 3;
const POLL_TIMEOUT_MS = 60_000;

export interface WeixinLoginOptions {
  baseUrl: string;
  routeTag?: string | number | null;
  stateDir: string;
  /** `channels.<name>.token`, which a successful login replaces for the channel. */
  configToken: string;
  /** Ask for a new login even when one is stored. */
  force: boolean;
  /** Shows the QR code content (a URL the WeChat app opens) to the user. */
  show(content: string): Promise<void> | void;
  /** Asks the user for the number WeChat shows on the phone. */
  ask(question: string): Promise<string>;
  /** Waits between status polls (1 s). */
  pause?: (ms: number) => Promise<void>;
}

export type WeixinLoginResult = { kind: "logged-in"; botId: string; userId: string; baseUrl: string } | { kind: "already-bound" };

async function localTokens(opts: WeixinLoginOptions): Promise<string[]> {
  const stored = (await loadAccount(opts.stateDir))?.token ?? "";
  return [...new Set([opts.configToken, stored].map((t) => t.trim()).filter(Boolean))];
}

async function fetchQr(api: WeixinApi, opts: WeixinLoginOptions): Promise<{ id: string; content: string }> {
  const tokens = opts.force ? [] : await localTokens(opts);
  let body = await api.post("ilink/bot/get_bot_qrcode?bot_type=3", { local_token_list: tokens }, { auth: false, bare: true });
  if (tokens.length && (Number(body.ret) === ERR_INVALID_ARGUMENT || Number(body.errcode) === ERR_INVALID_ARGUMENT)) {
    // The server refused the saved tokens: ask again without them.
    body = await api.post("ilink/bot/get_bot_qrcode?bot_type=3", { local_token_list: [] }, { auth: false, bare: true });
  }
  checkBody("get_bot_qrcode", body);
  const id = typeof body.qrcode === "string" ? body.qrcode : "";
  if (!id) throw new Error("WeChat get_bot_qrcode returned no QR code");
  const content = typeof body.qrcode_img_content === "string" && body.qrcode_img_content ? body.qrcode_img_content : id;
  return { id, content };
}

export async function loginWeixin(opts: WeixinLoginOptions): Promise<WeixinLoginResult> {
  const pause = opts.pause ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const api = new WeixinApi({ baseUrl: opts.baseUrl, routeTag: opts.routeTag ?? null });
  let qr = await fetchQr(api, opts);
  await opts.show(qr.content);
  let pollBase = opts.baseUrl;
  let verifyCode = "";
  let refreshes = 0;
  const refresh = async (why: string): Promise<void> => {
    if (++refreshes > MAX_QR_REFRESH) throw new Error(`WeChat login failed: ${why} ${MAX_QR_REFRESH} times; run the login again`);
    qr = await fetchQr(api, opts);
    pollBase = opts.baseUrl;
    verifyCode = "";
    await opts.show(qr.content);
  };
  for (;;) {
    let status: Record<string, unknown>;
    try {
      status = await api.get("ilink/bot/get_qrcode_status", { qrcode: qr.id, ...(verifyCode ? { verify_code: verifyCode } : {}) }, { auth: false, baseUrl: pollBase, timeoutMs: POLL_TIMEOUT_MS });
    } catch (error) {
      // A dropped or timed-out poll is polled again; a refusal is not.
      if (error instanceof WeixinApiError && !error.options.retryable) throw error;
      await pause(1000);
      continue;
    }
    switch (status.status) {
      case "confirmed": {
        const token = typeof status.bot_token === "string" ? status.bot_token : "";
        if (!token) throw new Error("WeChat confirmed the login but sent no bot_token");
        const baseUrl = typeof status.baseurl === "string" && status.baseurl ? status.baseurl : opts.baseUrl;
        const session = new WeixinSession({ stateDir: opts.stateDir, configToken: opts.configToken, configBaseUrl: opts.baseUrl, budget: 1, clock: systemClock });
        await session.commitLogin(token, baseUrl);
        return { kind: "logged-in", botId: String(status.ilink_bot_id ?? ""), userId: String(status.ilink_user_id ?? ""), baseUrl };
      }
      case "scaned_but_redirect": {
        const host = typeof status.redirect_host === "string" ? status.redirect_host.trim() : "";
        if (host) pollBase = /^https?:\/\//.test(host) ? host : `https://${host}`;
        break;
      }
      case "need_verifycode":
        verifyCode = (await opts.ask(verifyCode ? "That number did not match. Enter the number WeChat shows: " : "Enter the number WeChat shows on your phone: ")).trim();
        continue;
      case "verify_code_blocked":
        await refresh("the number was refused");
        continue;
      case "expired":
        await refresh("the QR code expired");
        continue;
      case "binded_redirect":
        if (!opts.force && (await localTokens(opts)).length) return { kind: "already-bound" };
        throw new Error(opts.force ? "WeChat reports this account already bound and sent no new credentials" : "WeChat reports this account already bound, but no token is stored here; run the login with --force");
      default:
        break;
    }
    await pause(1000);
  }
}
