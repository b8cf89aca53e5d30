/**
 * Feishu `im.message.receive_v1` events → gate input. Decides whether a group message is for the
 * bot (an @mention of the bot or @all, or a reply to one of its messages, per `groupPolicy`),
 * strips the bot's leading mention and spells out the others, reads text, rich-text (post),
 * media and card messages, and names the group session as the Python nanobot does (one per
 * topic with `topicIsolation`, else one per group).
 */
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";

/** The parts of the event body (schema 2.0 `event`) the channel reads. */
export interface FeishuMention {
  key?: string;
  id?: { open_id?: string; user_id?: string; union_id?: string };
  name?: string;
}

export interface FeishuMessageEvent {
  sender?: { sender_id?: { open_id?: string; user_id?: string }; sender_type?: string };
  message?: {
    message_id?: string;
    root_id?: string;
    parent_id?: string;
    thread_id?: string;
    chat_id?: string;
    chat_type?: string;
    message_type?: string;
    content?: string;
    mentions?: FeishuMention[];
  };
}

/** A resource (image or file) of a message, for the channel to download. */
export interface FeishuResource {
  key: string;
  /** The `type` query of the resource download: images and everything else ("file"). */
  type: "image" | "file";
  kind: MediaItem["kind"];
  name?: string;
}

export interface FeishuInboundOptions {
  channel: string;
  /** The bot's open_id (from `bot/v3/info`); empty when it could not be read. */
  botOpenId: string;
  groupPolicy: "mention" | "open";
  topicIsolation: boolean;
  /** Whether `id` is a message this bot sent (a reply to it addresses the bot). */
  isOwnMessage: (id: string) => boolean;
  /** Downloads the resources; failures leave a note in the text instead. */
  download: (messageId: string, resources: FeishuResource[]) => Promise<MediaItem[]>;
}

/** Undefined when the event is not a prompt for the bot. */
export async function toGateInput(event: FeishuMessageEvent, options: FeishuInboundOptions): Promise<GateInput | undefined> {
  const message = event.message;
  const senderId = event.sender?.sender_id?.open_id;
  // Other bots' messages are not prompts (as the Python nanobot).
  if (!message || !senderId || event.sender?.sender_type === "bot") return undefined;
  const { message_id: messageId, chat_id: chatId, chat_type: chatType, message_type: msgType } = message;
  if (!messageId || !chatId || !chatType || !msgType) return undefined;
  const isDirect = chatType === "p2p";
  const mentions = message.mentions ?? [];
  if (!isDirect && options.groupPolicy === "mention" && !addressesBot(message, mentions, options)) return undefined;

  const body = parseJson(message.content);
  const parsed = readContent(msgType, body);
  let content = parsed.text;
  if (msgType === "text") content = resolveMentions(stripLeadingBotMention(content, mentions, options), mentions);
  const media = parsed.resources.length ? await options.download(messageId, parsed.resources) : [];
  const missing = parsed.resources.length - media.length;
  if (missing > 0) content = [content, `[${missing} attachment(s) could not be downloaded]`].filter(Boolean).join("\n");
  content = content.trim();
  if (!content && media.length === 0) return undefined;

  const metadata: Record<string, unknown> = { messageId, chatType, msgType };
  if (message.parent_id) metadata.parentId = message.parent_id;
  if (message.root_id) metadata.rootId = message.root_id;
  if (message.thread_id) metadata.threadId = message.thread_id;
  const input: GateInput = {
    id: messageId,
    // Direct replies go to the user's open_id, group replies to the chat (the Python chat ids).
    chatId: isDirect ? senderId : chatId,
    sender: { id: senderId },
    content,
    isDirect,
    metadata,
  };
  if (media.length) input.media = media;
  if (!isDirect) {
    input.sessionKey = options.topicIsolation ? `${options.channel}:${chatId}:${message.root_id || messageId}` : `${options.channel}:${chatId}`;
  }
  return input;
}

function isBotMention(mention: FeishuMention, botOpenId: string): boolean {
  const openId = mention.id?.open_id ?? "";
  if (botOpenId) return openId === botOpenId;
  // Without the bot's open_id: apps have an open_id but no user_id (the Python heuristic).
  return !mention.id?.user_id && openId.startsWith("ou_");
}

function addressesBot(message: NonNullable<FeishuMessageEvent["message"]>, mentions: FeishuMention[], options: FeishuInboundOptions): boolean {
  if ((message.content ?? "").includes("@_all")) return true;
  if (mentions.some((m) => isBotMention(m, options.botOpenId))) return true;
  return message.parent_id !== undefined && message.parent_id !== "" && options.isOwnMessage(message.parent_id);
}

/** `@_user_1 /new` → `/new` when `@_user_1` is the bot, so commands work in groups. */
function stripLeadingBotMention(text: string, mentions: FeishuMention[], options: FeishuInboundOptions): string {
  const candidate = text.trimStart();
  for (const mention of mentions) {
    if (!mention.key || !isBotMention(mention, options.botOpenId)) continue;
    if (!keyPattern(mention.key, "^").test(candidate)) continue;
    const rest = candidate.slice(mention.key.length).trim();
    return rest || text;
  }
  return text;
}

/** Placeholders (`@_user_2`) become `@Name (ou_…)` so the model knows who was meant. */
function resolveMentions(text: string, mentions: FeishuMention[]): string {
  let out = text;
  for (const mention of mentions) {
    if (!mention.key) continue;
    const name = mention.name || mention.key;
    const openId = mention.id?.open_id;
    const userId = mention.id?.user_id;
    const label = openId && userId ? `@${name} (${openId}, user id: ${userId})` : openId ? `@${name} (${openId})` : `@${name}`;
    out = out.replace(keyPattern(mention.key, "", "g"), label);
  }
  return out;
}

/** `@_user_1` but not the start of `@_user_10`. */
function keyPattern(key: string, anchor: string, flags = ""): RegExp {
  return new RegExp(`${anchor}${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9_])`, flags);
}

function parseJson(content: string | undefined): Record<string, unknown> {
  if (!content) return {};
  try {
    const value: unknown = JSON.parse(content);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The text and downloadable resources of one message, by `message_type`. */
export function readContent(msgType: string, body: Record<string, unknown>): { text: string; resources: FeishuResource[] } {
  switch (msgType) {
    case "text":
      return { text: str(body.text), resources: [] };
    case "post":
      return readPost(body);
    case "image":
      return { text: "", resources: str(body.image_key) ? [{ key: str(body.image_key), type: "image", kind: "image" }] : [] };
    case "file":
    case "audio":
    case "media": {
      const key = str(body.file_key);
      const kind: MediaItem["kind"] = msgType === "audio" ? "audio" : msgType === "media" ? "video" : "document";
      const name = str(body.file_name) || undefined;
      return { text: "", resources: key ? [{ key, type: "file", kind, ...(name ? { name } : {}) }] : [] };
    }
    case "interactive":
      return { text: cardText(body), resources: [] };
    case "sticker":
      return { text: "[sticker]", resources: [] };
    case "share_chat":
      return { text: `[shared chat: ${str(body.chat_id)}]`, resources: [] };
    case "share_user":
      return { text: `[shared user: ${str(body.user_id)}]`, resources: [] };
    default:
      return { text: `[${msgType}]`, resources: [] };
  }
}

/** A post is `{title, content: [[element…] per line]}`, possibly wrapped in a locale (`zh_cn`). */
function readPost(body: Record<string, unknown>): { text: string; resources: FeishuResource[] } {
  const post = Array.isArray(body.content) ? body : (Object.values(body).find((v) => typeof v === "object" && v !== null && Array.isArray((v as Record<string, unknown>).content)) as Record<string, unknown> | undefined);
  if (!post) return { text: "", resources: [] };
  const lines: string[] = [];
  const resources: FeishuResource[] = [];
  if (str(post.title)) lines.push(str(post.title));
  for (const row of post.content as unknown[]) {
    if (!Array.isArray(row)) continue;
    let line = "";
    for (const element of row as Array<Record<string, unknown>>) {
      const tag = str(element.tag);
      if (tag === "text" || tag === "md") line += str(element.text);
      else if (tag === "a") line += str(element.href) ? `[${str(element.text)}](${str(element.href)})` : str(element.text);
      else if (tag === "at") line += `@${str(element.user_name) || str(element.user_id)}`;
      else if (tag === "code_block") line += "```" + str(element.language).toLowerCase() + "\n" + str(element.text) + "\n```";
      else if (tag === "img" && str(element.image_key)) resources.push({ key: str(element.image_key), type: "image", kind: "image" });
    }
    if (line) lines.push(line);
  }
  return { text: lines.join("\n"), resources };
}

/** The readable strings of a card (its header title, markdown and text elements), one per line. */
function cardText(body: Record<string, unknown>): string {
  const out: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== "object" || node === null) return;
    const obj = node as Record<string, unknown>;
    for (const key of ["content", "text"]) {
      if (typeof obj[key] === "string" && obj[key] !== "") out.push(obj[key]);
    }
    for (const [key, value] of Object.entries(obj)) if (typeof value === "object") visit(key === "i18n" ? undefined : value);
  };
  visit(body);
  return out.join("\n") || "[interactive card]";
}
