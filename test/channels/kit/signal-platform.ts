/** The channel kit's adapter for Signal: the real channel against the fake signal-cli daemon. */
import { join } from "node:path";
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { SIGNAL_ACCOUNT, SIGNAL_GROUP, startFakeSignal } from "../helpers/fake-signal.js";
import type { FakeSignal, SignalUser } from "../helpers/fake-signal.js";
import { tempHome, waitFor } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession, KitUser } from "./kit-types.js";

/**
 * The kit's users hide their phone numbers (Signal's default "who can see my number: nobody"),
 * so the daemon knows them by UUID only; phone-number senders are covered in signal.test.ts.
 */
const USERS: Record<string, SignalUser> = {
  "b1b1b1b1-0000-4000-8000-000000000001": { uuid: "b1b1b1b1-0000-4000-8000-000000000001", name: "Alice" },
  "c6c6c6c6-0000-4000-8000-000000000006": { uuid: "c6c6c6c6-0000-4000-8000-000000000006", name: "Mallory" },
};

function signalUser(user: KitUser): SignalUser {
  const found = USERS[user.id];
  if (!found) throw new Error(`no Signal user for ${user.id}`);
  return found;
}

export interface SignalSession extends KitSession {
  fake: FakeSignal;
  manager: ChannelManager;
}

/** Starts the real channel through the ChannelManager against a fresh fake daemon. */
export async function startSignal(config: Record<string, unknown>, switches: Record<string, unknown> = {}): Promise<SignalSession> {
  const home = await tempHome();
  const attachmentsDir = join(home.dir, "signal-cli", "attachments");
  const fake = await startFakeSignal({ attachmentsDir });
  const kit = await startKitManager({ channel: "signal", fake, switches, home, entry: { phoneNumber: SIGNAL_ACCOUNT, daemonHost: fake.host, daemonPort: fake.port, attachmentsDir, ...config } });
  let botMessage: number | undefined;

  return {
    ...kit,
    fake,
    groupChat: SIGNAL_GROUP,
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      const from = signalUser(user);
      if (where.chat === "dm") return String(await fake.push({ from, text, ...(attachment ? { attachment: { name: attachment.name, contentType: attachment.mimeType, content: attachment.content } } : {}) }));
      if (where.address === "reply" && botMessage === undefined) {
        // The bot must have said something in the group to be quoted.
        await kit.bus.publishOutbound({ kind: "message", channel: "signal", chatId: SIGNAL_GROUP, id: `seed-${Date.now()}`, content: "earlier answer" });
        botMessage = fake.messages.at(-1)!.timestamp;
      }
      return String(
        await fake.push({
          from,
          text,
          groupId: SIGNAL_GROUP,
          ...(where.address === "mention" ? { mentionBot: true } : {}),
          ...(where.address === "reply" ? { quote: { timestamp: botMessage!, author: SIGNAL_ACCOUNT } } : {}),
        }),
      );
    },
    sent() {
      return fake.messages
        .filter((m) => m.text !== "earlier answer")
        .map((m) => ({
          chatId: m.chatId,
          text: m.text,
          edits: [],
          files: m.files.map((f) => ({ name: f.name, content: f.content })),
          ...(m.quote ? { replyTo: String(m.quote.timestamp) } : {}),
        }));
    },
    failNextSends(count) {
      fake.failNext("send", 502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.liveStreams() > 0, "an open event stream");
      fake.dropStreams();
    },
    connections: () => fake.sessions(),
    typing: () => [...fake.typing],
  };
}

export const signalPlatform: KitPlatform = {
  channel: "signal",
  textLimit: 64_000,
  // Signal marks edited messages and allows few edits: a streamed reply is sent once.
  edits: false,
  typing: true,
  typingRefreshMs: 10_000,
  users: { alice: { id: "b1b1b1b1-0000-4000-8000-000000000001", username: "alice" }, mallory: { id: "c6c6c6c6-0000-4000-8000-000000000006", username: "mallory" } },
  // A reply quotes the asking message whenever the agent names it; nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startSignal(config, options?.switches),
};
