/**
 * `nanobot channels login <channel>`: pairs nanobot with a platform that links devices by QR
 * code instead of a token. Signal: signal-cli's startLink/finishLink (the QR code is printed in
 * the terminal). Channels that log in with a token or a password say so and where it goes.
 */
import type { Command } from "commander";
import { parseChannelConfig } from "../../channels/channel-config.js";
import { daemonUrl, signalConfigSchema } from "../../channels/signal/config.js";
import { linkSignalDevice } from "../../channels/signal/link.js";
import { ConfigError } from "../../core/errors.js";
import type { CliContext } from "../context.js";

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
    .description("link nanobot to a platform that pairs by QR code (signal); token channels say where their token goes")
    .argument("<channel>", "the channel's name under `channels` (or its type)")
    .option("--device-name <name>", "the name the phone shows for this linked device", "nanobot")
    .action(async (name: string, opts: { deviceName: string }, cmd: Command) => {
      const loaded = await ctx.loadConfig(cmd);
      ctx.printWarnings(loaded.warnings);
      const entry = loaded.config.channels[name];
      const raw = typeof entry === "object" && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : {};
      const type = typeof raw.type === "string" ? raw.type : name;
      if (type === "signal") return loginSignal(name, raw, opts.deviceName, ctx);
      const how = TOKEN_LOGINS[type];
      if (how) {
        throw new ConfigError(`channels.${name} (${type}) has no QR login: it logs in with ${how.replaceAll("<name>", name)}`, { path: `channels.${name}`, expected: "a channel that links by QR code (signal)" });
      }
      throw new ConfigError(`channels.${name}: "${type}" is not a channel type nanobot can log in to (QR login: signal)`, { path: `channels.${name}`, expected: "signal" });
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
