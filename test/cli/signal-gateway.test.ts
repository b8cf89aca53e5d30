/**
 * Signal end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` (snake_case keys, the `dm` policy) enabling Signal against the
 * fake signal-cli daemon; a user's direct message gets the scripted fake LLM's answer, and
 * `nanobot channels list --json` shows the channel connected.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../channels/helpers/harness.js";
import { SIGNAL_ACCOUNT, startFakeSignal } from "../channels/helpers/fake-signal.js";
import type { FakeSignal } from "../channels/helpers/fake-signal.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string | undefined;
let gateway: RunningNanobot | undefined;
let signal: FakeSignal | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gateway?.stop();
  await signal?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = signal = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("signal through nanobot gateway", () => {
  it("answers a direct message with the model's reply and lists the channel as connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-signal-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    const attachments = join(root, "signal-attachments");
    signal = await startFakeSignal({ attachmentsDir: attachments });
    llm = await startFakeLLM();
    llm.enqueue({ text: "Hello from the model via Signal" });
    const bob = { number: "+15552220002", uuid: "d2d2d2d2-0000-4000-8000-000000000002", name: "Bob" };
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { api_base: llm.openaiBaseURL, api_key: "sk-fake-signal-e2e-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        tools: { exec: { sandbox: "none" } },
        gateway: { port: await freePort() },
        channels: {
          signal: {
            enabled: true,
            phone_number: SIGNAL_ACCOUNT,
            daemon_host: signal.host,
            daemon_port: signal.port,
            attachments_dir: attachments,
            dm: { enabled: true, policy: "allowlist", allow_from: ["15552220002"] },
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await waitFor(() => signal!.liveStreams() > 0, "the gateway's event stream", 30_000);

    await signal.push({ from: bob, text: "hi nanobot" });
    const answer = await waitFor(() => signal!.messages.find((m) => m.text.includes("Hello from the model via Signal")), "the model's answer", 60_000);
    expect(answer.chatId).toBe(bob.number);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("hi nanobot");

    const list = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { source: string; channels: unknown[] };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "signal", type: "signal", enabled: true, connected: true }]);
  }, 120_000);
});
