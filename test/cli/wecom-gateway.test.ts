/**
 * WeCom end to end: the built CLI's `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.wecom` against the fake WeCom long connection
 * and the scripted fake LLM. A user's direct message gets the model's answer as a stream reply on
 * the message's frame, and `nanobot channels list --json` reports the channel connected.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WECOM_BOT_ID, WECOM_SECRET, startFakeWecom } from "../channels/helpers/fake-wecom.js";
import type { FakeWecom } from "../channels/helpers/fake-wecom.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string;
let llm: FakeLLM;
let wecom: FakeWecom;
let gateway: RunningNanobot | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-wecom-gw-"));
  llm = await startFakeLLM();
  wecom = await startFakeWecom();
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await wecom.close();
  await llm.close();
  await rm(root, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const alice = { id: "alice.zhang", username: "alice" };

describe("wecom through the gateway", () => {
  it("answers a direct message with the model's reply and lists the channel connected", async () => {
    const home = join(root, "home");
    await mkdir(join(root, "ws"), { recursive: true });
    await mkdir(home, { recursive: true });
    const port = await freePort();
    // The Python nanobot's keys, as its config.json spells them; wsUrl points at the fake.
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-wecom-gw-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws"), dream: { enabled: false } } },
        gateway: { port, heartbeat: { enabled: false } },
        channels: {
          wecom: { enabled: true, botId: WECOM_BOT_ID, secret: WECOM_SECRET, allowFrom: [alice.id], wsUrl: wecom.wsUrl },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    llm.enqueue({ text: "hello from the model" });
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await waitFor(() => wecom.liveSockets() > 0, "the subscribed connection", 30_000);

    wecom.pushMessage({ from: alice, text: "hi bot" });
    const answer = await waitFor(() => wecom.messages.find((m) => m.text === "hello from the model"), "the answer", 30_000);
    expect(answer).toMatchObject({ chatId: alice.id, via: "reply", msgtype: "stream", finished: true });
    const prompt = JSON.stringify(llm.requests.at(-1)?.body ?? {});
    expect(prompt).toContain("hi bot");

    const listed = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(listed.code, listed.stderr).toBe(0);
    const report = JSON.parse(listed.stdout) as { source: string; channels: unknown[] };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "wecom", type: "wecom", enabled: true, connected: true }]);
  }, 120_000);
});
