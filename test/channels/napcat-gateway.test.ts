/**
 * NapCat end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.napcat` against the fake NapCat and a scripted
 * fake LLM. A friend's private message is answered (quoting it), `nanobot channels list --json`
 * reports the channel connected, and the key nanobot cannot honour (`streaming: true`) is warned
 * about at start-up. Needs `npm run build`.
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
import { NAPCAT_TOKEN, startFakeNapcat } from "./helpers/fake-napcat.js";
import type { FakeNapcat } from "./helpers/fake-napcat.js";
import { waitFor } from "./helpers/harness.js";

let root: string | undefined;
let llm: FakeLLM | undefined;
let napcat: FakeNapcat | undefined;
let gateway: RunningNanobot | undefined;

afterEach(async () => {
  await gateway?.stop();
  await napcat?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = napcat = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("napcat through the gateway", () => {
  it("answers a private message with the model's reply and shows as connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-napcat-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    llm = await startFakeLLM();
    napcat = await startFakeNapcat();
    const alice = 20001;
    const port = await freePort();
    // As the Python nanobot writes it (camelCase keys), with its NapCat defaults spelled out.
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-napcat-e2e-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        gateway: { port },
        channels: {
          sendProgress: false,
          napcat: {
            enabled: true,
            wsUrl: napcat.url,
            accessToken: NAPCAT_TOKEN,
            allowFrom: [String(alice)],
            groupPolicy: "mention",
            groupPolicyOverrides: {},
            welcomeNewMembers: true,
            maxImageBytes: 20971520,
            streaming: true,
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await gateway.waitFor(/channels\.napcat\.streaming cannot show a reply as it grows/, 10_000);
    await waitFor(() => napcat!.liveSockets() > 0, "the gateway's NapCat connection", 30_000);

    llm.enqueue({ text: "Hello Alice, from the model." });
    const asked = napcat.userSays({ userId: alice, text: "hi bot" });
    const answer = await waitFor(() => napcat!.sent.find((m) => m.text === "Hello Alice, from the model."), "the answer in the private chat", 60_000);
    expect(answer).toMatchObject({ messageType: "private", targetId: alice, replyTo: String(asked) });
    const prompt = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(prompt.messages.at(-1))).toContain("hi bot");

    const list = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { source: string; channels: Array<Record<string, unknown>> };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "napcat", type: "napcat", enabled: true, connected: true }]);
  }, 120_000);
});
