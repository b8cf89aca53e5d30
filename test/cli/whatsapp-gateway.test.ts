/**
 * WhatsApp (Cloud API) end to end through the built CLI: `nanobot gateway` with a config that
 * enables WhatsApp against the fake Cloud API; Meta's subscription check passes, a user's
 * signed webhook message gets the scripted fake LLM's answer as a threaded reply, and
 * `nanobot channels list --json` shows the channel connected.
 */
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../channels/helpers/harness.js";
import { WA_VERIFY_TOKEN, startFakeWhatsApp } from "../channels/helpers/fake-whatsapp.js";
import type { FakeWhatsApp } from "../channels/helpers/fake-whatsapp.js";
import { WA_CONFIG } from "../channels/kit/whatsapp-platform.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { freePort } from "../mcp/helpers.js";
import { startChannelGateway } from "./channel-gateway.js";
import type { ChannelGateway } from "./channel-gateway.js";

let gw: ChannelGateway | undefined;
let whatsapp: FakeWhatsApp | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gw?.close();
  await whatsapp?.close();
  await llm?.close();
  gw = whatsapp = llm = undefined;
});

describe("whatsapp through nanobot gateway", () => {
  it("verifies the webhook, answers a user's message with the model's reply and lists the channel as connected", async () => {
    whatsapp = await startFakeWhatsApp();
    llm = await startFakeLLM();
    llm.enqueue({ text: "Hello from the model via WhatsApp" });
    const webhookPort = await freePort();
    gw = await startChannelGateway({
      channel: "whatsapp",
      llm,
      config: { tools: { exec: { sandbox: "none" } } },
      entry: { ...WA_CONFIG, apiRoot: whatsapp.apiRoot, webhookPort, allowFrom: ["+15551110001"], groupPolicy: "open" },
    });
    whatsapp.setWebhook(`http://127.0.0.1:${webhookPort}/whatsapp/webhook`);
    expect(await whatsapp.verify(WA_VERIFY_TOKEN, "e2e-challenge")).toEqual({ status: 200, body: "e2e-challenge" });

    const asked = await whatsapp.push({ from: "15551110001", name: "alice", text: "hi nanobot" });
    const answer = await waitFor(() => whatsapp!.messages.find((m) => m.text.includes("Hello from the model via WhatsApp")), "the model's answer", 60_000);
    expect(answer.to).toBe("15551110001");
    expect(answer.replyTo).toBe(asked);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("hi nanobot");
    expect(await gw.listedConnected()).toEqual([{ name: "whatsapp", type: "whatsapp", enabled: true, connected: true }]);
  }, 120_000);
});
