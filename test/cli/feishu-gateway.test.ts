/**
 * Feishu end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` (the Python nanobot's `channels.feishu` keys and defaults, plus
 * `apiRoot` pointing at the loopback Feishu fake), the scripted fake LLM answering. A user's
 * direct message reaches the model and its answer reaches the user's chat; `nanobot channels
 * list --json` asks the running gateway and reports Feishu connected.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FEISHU_APP_ID, FEISHU_APP_SECRET, startFakeFeishu } from "../channels/helpers/fake-feishu.js";
import type { FakeFeishu } from "../channels/helpers/fake-feishu.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string | undefined;
let gateway: RunningNanobot | undefined;
let feishu: FakeFeishu | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gateway?.stop();
  await feishu?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = feishu = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const alice = { openId: "ou_alice00000000000000000000000001", name: "alice" };

describe("feishu through the gateway", () => {
  it("answers a direct message with the model's reply, and channels list shows feishu connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-feishu-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    llm = await startFakeLLM();
    feishu = await startFakeFeishu();
    const port = await freePort();
    // The Python nanobot's feishu section as `nanobot channels login feishu` leaves it.
    const pythonFeishu = {
      enabled: true,
      instanceId: "default",
      name: "nanobot",
      identityKey: "",
      appId: FEISHU_APP_ID,
      appSecret: FEISHU_APP_SECRET,
      encryptKey: "",
      verificationToken: "",
      allowFrom: [alice.openId],
      reactEmoji: "THUMBSUP",
      doneEmoji: null,
      toolHintPrefix: "\u{1F527}",
      groupPolicy: "mention",
      replyToMessage: false,
      streaming: true,
      domain: "feishu",
      topicIsolation: true,
      apiRoot: feishu.url,
    };
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        agents: { defaults: { model: "custom/test-model", workspace } },
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-feishu-e2e-0001" } },
        channels: { sendProgress: false, sendToolHints: false, feishu: pythonFeishu },
        gateway: { host: "127.0.0.1", port },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await waitFor(() => feishu!.liveSockets() > 0, "the long connection", 30_000);

    llm.enqueue({ text: "Hello from the model, via Feishu" });
    const asked = feishu.dispatchMessage({ sender: alice, text: "hi nanobot" });
    const answer = await waitFor(() => feishu!.messages.find((m) => m.text === "Hello from the model, via Feishu"), "the answer", 30_000);
    expect(answer.chatId).toBe(alice.openId);
    const body = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(body.messages.at(-1))).toContain("hi nanobot");
    // The asking message carried the THUMBSUP reaction while the model worked.
    await waitFor(() => feishu!.reactions.some((r) => r.action === "remove" && r.messageId === asked), "the reaction removed", 10_000);

    const run = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { source: string; channels: Array<Record<string, unknown>> };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "feishu", type: "feishu", enabled: true, connected: true }]);
  }, 120_000);
});
