/**
 * `nanobot channels login <channel>`: pairs nanobot with a platform that links devices by QR
 * code instead of a token. Signal: signal-cli's startLink/finishLink; WeChat: the iLink QR login,
 * whose bot token is stored in `<stateDir>/account.json` (QR codes are printed in the terminal).
 * Channels that log in with a token or a password say so and where it goes.
 */
import type { Command } from "commander";
import { parseChannelConfig } from "../../channels/channel-config.js";
import { daemonUrl, signalConfigSchema } from "../../channels/signal/config.js";
import { linkSignalDevice } from "../../channels/signal/link.js";
import { parseWeixinConfig } from "../../channels/weixin/config.js";
import { loginWeixin } from "../../channels/weixin/login.js";
import { ConfigError } from "../../core/errors.js";
import type { CliContext } from "../context.js";
import type { InputStream } from "../io.js";

/** How each token-based channel type logs in, for the refusal message. */
const TOKEN_LOGINS: Record<string, string> = {
  telegram: "a bot token from @BotFather in channels.<name>.token",
  discord: "a bot token from the developer portal in channels.<name>.token",
  email: "the mailbox's credentials in channels.<name>.imapPassword / smtpPassword",
  whatsapp: "a Cloud API access token in channels.<name>.accessToken (plus phoneNumberId, appSecret and verifyToken; see docs/channels/whatsapp.md)",
  napcat: "NapCat's own QR login (scan it in NapCat's WebUI or log); nanobot then connects to NapCat's WebSocket server at channels.<name>.wsUrl with channels.<name>.accessToken",
  websocket: "no login: clients connect to the gateway (channels.<name>.token is the clients' shared secret)",
};

/** Renders `text` as a QR code for a terminal (half-height blocks, scannable from a phone). */
async function terminalQr(text: string): Promise<string> {
  const { default: qrcode } = await import("qrcode-terminal");
  return new Promise((resolve) => qrcode.generate(text, { small: true }, resolve));
}

export function registerChannelsLogin(channels: Command, ctx: CliContext): void {
  channels
    .command("login")
    .description("link nanobot to a platform that pairs by QR code (signal, weixin); token channels say where their token goes")
    .argument("<channel>", "the channel's name under `channels` (or its type)")
    .option("--device-name <name>", "the name the phone shows for this linked device", "nanobot")
    .option("--force", "weixin: scan a new QR code even when a login is stored")
    .action(async (name: string, opts: { deviceName: string; force?: boolean }, cmd: Command) => {
      const loaded = await ctx.loadConfig(cmd);
      ctx.printWarnings(loaded.warnings);
      const entry = loaded.config.channels[name];
      const raw = typeof entry === "object" && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : {};
      const type = typeof raw.type === "string" ? raw.type : name;
      if (type === "signal") return loginSignal(name, raw, opts.deviceName, ctx);
      if (type === "weixin") return loginWeixinCli(name, raw, loaded.home, opts.force === true, ctx);
      const how = TOKEN_LOGINS[type];
      if (how) {
        throw new ConfigError(`channels.${name} (${type}) has no QR login: it logs in with ${how.replaceAll("<name>", name)}`, { path: `channels.${name}`, expected: "a channel that links by QR code (signal, weixin)" });
      }
      throw new ConfigError(`channels.${name}: "${type}" is not a channel type nanobot can log in to (QR login: signal, weixin)`, { path: `channels.${name}`, expected: "signal or weixin" });
    });
}

async function loginSignal(name: string, raw: Record<string, unknown>, deviceName: string, ctx: CliContext): Promise<void> {
  const config = parseChannelConfig(name, signalConfigSchema, raw);
  const base = daemonUrl(config);
  const { out } = ctx.colors;
  ctx.io.stderr.write(`asking the signal-cli daemon at ${base} for a device link (run it without -a: signal-cli daemon --http ${config.daemonHost}:${config.daemonPort})\n`);
  const { number } = await linkSignalDevice(base, deviceName, {
    show: async (uri) => {
      ctx.io.stdout.write(`Scan this with Signal on your phone (Settings → Linked devices → +):\n\n${await terminalQr(uri)}\n\n${uri}\n\nwaiting for the phone…\n`);
    },
  });
  ctx.io.stdout.write(`${out.green("linked:")} "${deviceName}" is now a device of ${number || "the account"}\n`);
  if (number && config.phoneNumber !== number) {
    ctx.io.stdout.write(`set channels.${name}.phoneNumber to "${number}" and run the daemon for it: signal-cli -a ${number} daemon --http ${config.daemonHost}:${config.daemonPort}\n`);
  }
}

/** Reads one line from standard input (the number WeChat shows during a verified login). */
async function readLine(stdin: InputStream | undefined): Promise<string> {
  if (!stdin) throw new Error("WeChat asks for the number shown on the phone, but there is no standard input to read it from");
  let line = "";
  for await (const chunk of stdin) {
    line += String(chunk);
    if (line.includes("\n")) break;
  }
  return line.split("\n")[0] ?? "";
}

async function loginWeixinCli(name: string, raw: Record<string, unknown>, home: string, force: boolean, ctx: CliContext): Promise<void> {
  const config = parseWeixinConfig(raw, name, home);
  const { out } = ctx.colors;
  ctx.io.stderr.write(`asking WeChat at ${config.baseUrl} for a login QR code\n`);
  const result = await loginWeixin({
    baseUrl: config.baseUrl,
    routeTag: config.routeTag ?? null,
    stateDir: config.stateDir,
    configToken: config.token,
    force,
    show: async (content) => {
      ctx.io.stdout.write(`Scan this with WeChat on your phone:\n\n${await terminalQr(content)}\n\n${content}\n\nwaiting for the phone…\n`);
    },
    ask: async (question) => {
      ctx.io.stdout.write(question);
      return readLine(ctx.io.stdin);
    },
  });
  if (result.kind === "already-bound") {
    ctx.io.stdout.write(`${out.green("already logged in:")} the stored WeChat login is still valid (use --force for a new one)\n`);
    return;
  }
  ctx.io.stdout.write(`${out.green("logged in:")} WeChat bot ${result.botId || "(unnamed)"} — token stored in ${config.stateDir}/account.json\n`);
  if (raw.enabled !== true) ctx.io.stdout.write(`set channels.${name}.enabled to true and run \`nanobot gateway\`\n`);
}
