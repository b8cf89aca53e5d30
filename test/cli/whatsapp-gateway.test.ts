/**
 * WhatsApp (Cloud API) end to end through the built CLI: `nanobot gateway` with a config that
 * enables WhatsApp against the fake Cloud API; Meta's subscription check passes, a user's
 * signed webhook message gets the scripted fake LLM's answer as a threaded reply, and
 * `nanobot channels list --json` shows the channel connected.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../channels/helpers/harness.js";
import { WA_VERIFY_TOKEN, startFakeWhatsApp } from "../channels/helpers/fake-whatsapp.js";
import type { FakeWhatsApp } from "../channels/helpers/fake-whatsapp.js";
import { WA_CONFIG } from "../channels/kit/whatsapp-platform.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string | undefined;
let gateway: RunningNanobot | undefined;
let whatsapp: FakeWhatsApp | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gateway?.stop();
  await whatsapp?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = whatsapp = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("whatsapp through nanobot gateway", () => {
  it("verifies the webhook, answers a user's message with the model's reply and lists the channel as connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-whatsapp-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    whatsapp = await startFakeWhatsApp();
    llm = await startFakeLLM();
    llm.enqueue({ text: "Hello from the model via WhatsApp" });
    const webhookPort = await freePort();
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-whatsapp-e2e-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        tools: { exec: { sandbox: "none" } },
        gateway: { port: await freePort() },
        channels: {
          whatsapp: { enabled: true, ...WA_CONFIG, apiRoot: whatsapp.apiRoot, webhookPort, allowFrom: ["+15551110001"], groupPolicy: "open" },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    whatsapp.setWebhook(`http://127.0.0.1:${webhookPort}/whatsapp/webhook`);
    expect(await whatsapp.verify(WA_VERIFY_TOKEN, "e2e-challenge")).toEqual({ status: 200, body: "e2e-challenge" });

    const asked = await whatsapp.push({ from: "15551110001", name: "alice", text: "hi nanobot" });
    const answer = await waitFor(() => whatsapp!.messages.find((m) => m.text.includes("Hello from the model via WhatsApp")), "the model's answer", 60_000);
    expect(answer.to).toBe("15551110001");
    expect(answer.replyTo).toBe(asked);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("hi nanobot");

    const list = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { source: string; channels: unknown[] };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "whatsapp", type: "whatsapp", enabled: true, connected: true }]);
  }, 120_000);
});
