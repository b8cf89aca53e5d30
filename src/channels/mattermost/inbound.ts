/**
 * Mattermost `posted` events → what the channel forwards. Decides whether a channel post is
 * for the bot (groupPolicy / groupPolicyInThread: an @mention, a reply in a thread the bot
 * takes part in, every post, or allow-listed channels), applies `teamId`, strips the bot's
 * @mention and names the thread the reply belongs in.
 */
import type { MattermostConfig } from "./config.js";
import type { MattermostEvent } from "./event-socket.js";

/** The fields of a Mattermost post the channel reads. */
export interface MattermostPost {
  id: string;
  channel_id: string;
  user_id: string;
  message: string;
  root_id?: string;
  type?: string;
  file_ids?: string[];
}

export interface PostedEvent {
  post: MattermostPost;
  /** "D" direct, "G" group message, "O" public, "P" private channel. */
  channelType: string;
  teamId: string;
  /** User ids the server found @mentioned (`data.mentions`). */
  mentions: string[];
  senderName: string;
}

/** Reads a `posted` event (its `post` and `mentions` are JSON strings); undefined if malformed. */
export function readPosted(event: MattermostEvent): PostedEvent | undefined {
  const data = event.data;
  const post = parseJson(data.post) as MattermostPost | undefined;
  if (!post || typeof post.id !== "string" || typeof post.channel_id !== "string" || typeof post.user_id !== "string") return undefined;
  const mentions = parseJson(data.mentions);
  return {
    post: { ...post, message: typeof post.message === "string" ? post.message : "" },
    channelType: typeof data.channel_type === "string" ? data.channel_type : "O",
    teamId: typeof data.team_id === "string" && data.team_id ? data.team_id : (event.broadcast?.team_id ?? ""),
    mentions: Array.isArray(mentions) ? mentions.filter((m): m is string => typeof m === "string") : [],
    senderName: typeof data.sender_name === "string" ? data.sender_name.replace(/^@/, "") : "",
  };
}

function parseJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

export interface Bot {
  id: string;
  username: string;
}

export type Verdict =
  | { kind: "ignore"; reason: string }
  | {
      kind: "accept";
      isDirect: boolean;
      /** The text without the bot's @mention. */
      content: string;
      /** The root post the reply goes under; undefined = not threaded. */
      threadRoot: string | undefined;
    };

export interface VerdictContext {
  bot: Bot;
  config: MattermostConfig;
  /** Whether the bot posted in (or started) the thread with this root. */
  botInThread: (rootId: string) => boolean;
}

export function judgePost(event: PostedEvent, context: VerdictContext): Verdict {
  const { post } = event;
  const { bot, config } = context;
  if (post.user_id === bot.id) return { kind: "ignore", reason: "own post" };
  if (post.type && post.type.startsWith("system_")) return { kind: "ignore", reason: "system post" };
  const isDirect = event.channelType === "D";
  const root = post.root_id || undefined;
  if (isDirect) {
    if (!config.dm.enabled) return { kind: "ignore", reason: "dm.enabled is false" };
    const threadRoot = root ?? (config.dmReplyInThread ? post.id : undefined);
    return { kind: "accept", isDirect, content: stripMention(post.message, bot.username), threadRoot };
  }
  if (config.teamId && event.teamId && event.teamId !== config.teamId) return { kind: "ignore", reason: "another team" };
  const policy = root ? config.groupPolicyInThread : config.groupPolicy;
  const addressed =
    policy === "open" ||
    (policy === "allowlist" && config.groupAllowFrom.includes(post.channel_id)) ||
    (policy === "mention" && (mentionsBot(event, bot) || (root !== undefined && context.botInThread(root))));
  if (!addressed) return { kind: "ignore", reason: `not addressed (groupPolicy${root ? "InThread" : ""} ${policy})` };
  const threadRoot = root ?? (config.replyInThread ? post.id : undefined);
  return { kind: "accept", isDirect, content: stripMention(post.message, bot.username), threadRoot };
}

function mentionsBot(event: PostedEvent, bot: Bot): boolean {
  if (event.mentions.includes(bot.id)) return true;
  return mentionPattern(bot.username).test(event.post.message);
}

/** `@name` not inside a longer name or an e-mail address. */
function mentionPattern(username: string, flags = ""): RegExp {
  const escaped = username.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w@])@${escaped}(?![\\w-])`, flags);
}

/** Removes `@bot` so "@nanobot /new" reads "/new". */
export function stripMention(text: string, username: string): string {
  if (!username) return text.trim();
  return text
    .replace(mentionPattern(username, "gi"), "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

export function mediaKind(mimeType: string | undefined): "image" | "audio" | "video" | "document" {
  if (mimeType?.startsWith("image/")) return "image";
  if (mimeType?.startsWith("audio/")) return "audio";
  if (mimeType?.startsWith("video/")) return "video";
  return "document";
}
