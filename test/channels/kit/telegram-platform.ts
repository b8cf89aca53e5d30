/** The channel kit's adapter for Telegram: the real grammY-based channel over the fake Bot API. */
import { BOT, BOT_TOKEN, startFakeBotApi } from "../helpers/fake-bot-api.js";
import type { ApiCall } from "../helpers/fake-bot-api.js";
import { waitFor } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSent, KitSession } from "./kit-types.js";

const GROUP_ID = -100;

function fileOf(call: ApiCall, field: string): Array<{ name: string; content: string }> {
  const file = call.params[field] as { fileName?: string; content?: string } | undefined;
  return file?.fileName !== undefined ? [{ name: file.fileName, content: file.content ?? "" }] : [];
}

export const telegramPlatform: KitPlatform = {
  channel: "telegram",
  textLimit: 4096,
  edits: true,
  typing: true,
  users: { alice: { id: "42", username: "alice" }, mallory: { id: "666", username: "mallory" } },
  replyConfig: { replyToMessage: true },
  codeBlocksClosed: (text) => (text.match(/<pre>/g) ?? []).length === (text.match(/<\/pre>/g) ?? []).length,

  async start(config, options = {}): Promise<KitSession> {
    const fake = await startFakeBotApi();
    const kit = await startKitManager({ channel: "telegram", fake, switches: options.switches, entry: { token: BOT_TOKEN, apiRoot: fake.url, pollingTimeoutS: 1, ...config } });
    let nextFile = 1;
    // Long polling has no session: a getUpdates after a cut poll is the reconnection.
    let pollsAtDrop: number | undefined;
    let connections = 1;

    return {
      ...kit,
      groupChat: String(GROUP_ID),
      dmChat: (user) => user.id,
      async userSays(user, text, where, attachment) {
        const from = { id: Number(user.id), username: user.username };
        const base = where.chat === "dm" ? { chatId: Number(user.id), chatType: "private" as const } : { chatId: GROUP_ID, chatType: "supergroup" as const };
        let body = text;
        const extra: Record<string, unknown> = {};
        if (where.chat === "group" && where.address === "mention") {
          body = `@${BOT.username} ${text}`;
          extra.entities = [{ type: "mention", offset: 0, length: BOT.username.length + 1 }];
        }
        if (where.chat === "group" && where.address === "reply") extra.replyToBot = true;
        if (attachment) {
          const fileId = `file-${nextFile++}`;
          fake.addFile(fileId, `documents/${attachment.name}`, attachment.content);
          extra.document = { fileId, uniqueId: `${fileId}-u`, fileName: attachment.name, mimeType: attachment.mimeType };
        }
        return String(fake.pushMessage({ ...base, from, text: body, ...extra }));
      },
      sent() {
        const texts: KitSent[] = fake.messages.map((m) => ({
          chatId: m.chat_id,
          text: m.text,
          edits: m.edits,
          files: [],
          ...(m.reply_to !== undefined ? { replyTo: String(m.reply_to) } : {}),
        }));
        const uploads: KitSent[] = [...fake.callsOf("sendPhoto"), ...fake.callsOf("sendDocument")].map((call) => ({
          chatId: String(call.params.chat_id),
          text: "",
          edits: [],
          files: [...fileOf(call, "photo"), ...fileOf(call, "document")],
        }));
        return [...texts, ...uploads];
      },
      failNextSends(count) {
        for (let i = 0; i < count; i++) fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
      },
      async dropConnection() {
        await waitFor(() => fake.waitingPolls() > 0, "a waiting long poll");
        pollsAtDrop = fake.callsOf("getUpdates").length;
        if (fake.dropConnections() === 0) throw new Error("no long poll was cut");
      },
      connections() {
        if (pollsAtDrop !== undefined && fake.callsOf("getUpdates").length > pollsAtDrop) {
          pollsAtDrop = undefined;
          connections++;
        }
        return connections;
      },
      typing: () => fake.callsOf("sendChatAction").map((call) => String(call.params.chat_id)),
    };
  },
};
