/**
 * Where a channel runs when several gateway workers share one PostgreSQL store. A channel whose
 * platform POSTs its events to the gateway's own HTTP server (Slack's Events API, `mode:
 * "http"`) runs on every worker: behind a load balancer the platform's webhook reaches any of
 * them, the per-session lease serialises the turns, the reply goes out through the platform's
 * stateless Web API, and repeated deliveries are recognised through the store. So does the
 * WebSocket channel, also served on the gateway's port (replies cross workers on the relay). Everything that
 * holds a connection or polls (Socket Mode, Telegram's getUpdates, Discord's gateway, Matrix
 * sync, Feishu/DingTalk/WeCom long connections, IMAP) runs on the elected leader only, as do the
 * channels with a webhook listener of their own on a configured port (Teams, WhatsApp): two
 * workers on one host cannot both bind it.
 */

/** "every-worker": started on each worker; "leader": started for the leader's term. */
export type ChannelPlacement = "every-worker" | "leader";

/** The placement of one `channels.<name>` entry of this type. */
export function channelPlacement(type: string, raw: Record<string, unknown>): ChannelPlacement {
  if (type === "slack" && raw.mode === "http") return "every-worker";
  // Served on the gateway's own port too: a client may connect to any worker, and a reply made
  // on a worker without its socket goes over the cluster relay to the one that has it.
  if (type === "websocket") return "every-worker";
  return "leader";
}
