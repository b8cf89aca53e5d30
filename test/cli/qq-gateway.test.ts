/**
 * QQ end to end through the built CLI: `nanobot gateway` with a Python-style `config.json`
 * (snake_case keys) enabling the channel against the loopback fake platform and a scripted
 * fake LLM. `channels list --json` reports the channel connected; a user's direct message gets
 * the acknowledgement and then the model's answer, both as passive replies to it.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QQ_APP_ID, QQ_SECRET, startFakeQQ } from "../channels/helpers/fake-qq.js";
import type { FakeQQ } from "../channels/helpers/fake-qq.js";
import { waitFor } from "../channels/helpers/harness.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string;
let gateway: RunningNanobot | undefined;
let platform: FakeQQ | undefined;
let llm: FakeLLM | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-qq-e2e-"));
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await platform?.close();
  platform = undefined;
  await llm?.close();
  llm = undefined;
  await rm(root, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const alice = "ALICEOPENIDAAAAAAAAAAAAAAAAAAAA1";

describe("qq through nanobot gateway", () => {
  it("connects with a Python config.json and answers a direct message with the model's reply", async () => {
    platform = await startFakeQQ();
    llm = await startFakeLLM();
    llm.enqueue({ text: "Tea is ready." });
    const home = join(root, "home");
    await mkdir(home, { recursive: true });
    await mkdir(join(root, "ws"));
    const port = await freePort();
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { api_base: llm.openaiBaseURL, api_key: "sk-fake-qq-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
        gateway: { port },
        channels: {
          qq: { enabled: true, app_id: QQ_APP_ID, secret: QQ_SECRET, allow_from: [alice], ack_message: "on it", api_base: platform.url, token_url: platform.tokenUrl },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);

    let report: { channels: Array<Record<string, unknown>> } = { channels: [] };
    for (let i = 0; i < 40 && report.channels[0]?.connected !== true; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 250));
      const run = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
      expect(run.code, run.stderr).toBe(0);
      report = JSON.parse(run.stdout) as typeof report;
    }
    expect(report.channels).toEqual([{ name: "qq", type: "qq", enabled: true, connected: true }]);

    const messageId = platform.userSays({ author: alice, content: "is the tea ready?", where: "c2c" });
    await waitFor(() => platform!.sent.find((m) => m.content === "Tea is ready."), "the model's answer", 60_000);
    expect(platform.sent.map((m) => [m.chatId, m.content, m.msgId])).toEqual([
      [alice, "on it", messageId],
      [alice, "Tea is ready.", messageId],
    ]);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("is the tea ready?");
  }, 120_000);
});
