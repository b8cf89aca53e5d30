/**
 * WeChat end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.weixin` against the fake iLink API and a
 * scripted fake LLM. A user's message is answered under its context token, `nanobot channels
 * list --json` reports the channel connected, and a Python key nanobot cannot fully honour
 * (`replyProgressMessages: true`) is warned about at start-up. Needs `npm run build`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";
import { WEIXIN_TOKEN, startFakeWeixin } from "./helpers/fake-weixin.js";
import type { FakeWeixin } from "./helpers/fake-weixin.js";
import { waitFor } from "./helpers/harness.js";

let root: string | undefined;
let llm: FakeLLM | undefined;
let weixin: FakeWeixin | undefined;
let gateway: RunningNanobot | undefined;

afterEach(async () => {
  await gateway?.stop();
  await weixin?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = weixin = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("weixin through the gateway", () => {
  it("answers a user's message with the model's reply and shows as connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-weixin-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    llm = await startFakeLLM();
    weixin = await startFakeWeixin();
    const alice = "o9cq80-alice@im.wechat";
    const port = await freePort();
    // As the Python nanobot writes it (camelCase keys), with its WeChat defaults spelled out.
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-weixin-e2e-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        gateway: { port },
        channels: {
          sendProgress: false,
          weixin: {
            enabled: true,
            token: WEIXIN_TOKEN,
            allowFrom: [alice],
            baseUrl: weixin.url,
            cdnBaseUrl: weixin.cdnUrl,
            routeTag: null,
            stateDir: "",
            pollTimeout: 35,
            sendProgress: false,
            sendToolHints: false,
            replyProgressMessages: true,
            contextMessageBudget: 8,
            streaming: true,
            blockStreaming: false,
            blockStreamingMinChars: 1200,
            blockStreamingMaxMessages: 3,
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await gateway.waitFor(/channels\.weixin\.replyProgressMessages: nanobot sends no structured tool-call cards/, 10_000);

    llm.enqueue({ text: "Hello Alice, from the model." });
    const asked = weixin.userSays({ from: alice, text: "hi bot" });
    const answer = await waitFor(() => weixin!.sent.find((m) => m.text === "Hello Alice, from the model."), "the answer in the chat", 60_000);
    expect(answer).toMatchObject({ to: alice, replyTo: asked });
    const prompt = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(prompt.messages.at(-1))).toContain("hi bot");

    const list = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { source: string; channels: Array<Record<string, unknown>> };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "weixin", type: "weixin", enabled: true, connected: true }]);
  }, 120_000);
});
