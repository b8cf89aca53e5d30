/**
 * Signal end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` (snake_case keys, the `dm` policy) enabling Signal against the
 * fake signal-cli daemon; a user's direct message gets the scripted fake LLM's answer, and
 * `nanobot channels list --json` shows the channel connected.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../channels/helpers/harness.js";
import { SIGNAL_ACCOUNT, startFakeSignal } from "../channels/helpers/fake-signal.js";
import type { FakeSignal } from "../channels/helpers/fake-signal.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let attachments: string | undefined;
let gw: ChannelGateway | undefined;
let signal: FakeSignal | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gw?.close();
  await signal?.close();
  await llm?.close();
  if (attachments) await rm(attachments, { recursive: true, force: true });
  gw = signal = llm = attachments = undefined;
});

describe("signal through nanobot gateway", () => {
  it("answers a direct message with the model's reply and lists the channel as connected", async () => {
    attachments = await mkdtemp(join(tmpdir(), "nanobot-signal-attachments-"));
    signal = await startFakeSignal({ attachmentsDir: attachments });
    llm = await startFakeLLM();
    llm.enqueue({ text: "Hello from the model via Signal" });
    const bob = { number: "+15552220002", uuid: "d2d2d2d2-0000-4000-8000-000000000002", name: "Bob" };
    gw = await startChannelGateway({
      channel: "signal",
      llm,
      config: { tools: { exec: { sandbox: "none" } } },
      entry: {
        phone_number: SIGNAL_ACCOUNT,
        daemon_host: signal.host,
        daemon_port: signal.port,
        attachments_dir: attachments,
        dm: { enabled: true, policy: "allowlist", allow_from: ["15552220002"] },
      },
    });
    await waitFor(() => signal!.liveStreams() > 0, "the gateway's event stream", 30_000);

    await signal.push({ from: bob, text: "hi nanobot" });
    const answer = await waitFor(() => signal!.messages.find((m) => m.text.includes("Hello from the model via Signal")), "the model's answer", 60_000);
    expect(answer.chatId).toBe(bob.number);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("hi nanobot");
    expect(await gw.listedConnected()).toEqual([{ name: "signal", type: "signal", enabled: true, connected: true }]);
  }, 120_000);
});
