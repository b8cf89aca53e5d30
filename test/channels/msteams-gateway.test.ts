/**
 * Teams end to end through the built CLI: `nanobot gateway` with a Python-style
 * `config.json` enabling `channels.msteams` against the fake Bot Framework and a scripted fake
 * LLM. A signed user message reaches the agent, the model's answer comes back through the Bot
 * Connector, and `nanobot channels list --json` shows the channel connected.
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
import { TEAMS_APP_ID, TEAMS_APP_PASSWORD, startFakeTeams } from "./helpers/fake-msteams.js";
import type { FakeTeams } from "./helpers/fake-msteams.js";
import { waitFor } from "./helpers/harness.js";

let root: string | undefined;
let gateway: RunningNanobot | undefined;
let teams: FakeTeams | undefined;
let llm: FakeLLM | undefined;

afterEach(async () => {
  await gateway?.stop();
  await teams?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = teams = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("msteams through nanobot gateway", () => {
  it("answers a Teams direct message with the model's reply and reports the channel connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-msteams-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(home, { recursive: true });
    await mkdir(workspace, { recursive: true });
    teams = await startFakeTeams();
    llm = await startFakeLLM();
    const [gatewayPort, teamsPort] = [await freePort(), await freePort()];
    const alice = { id: "aad-e2e-alice", username: "alice" };
    // A Python nanobot config.json: camelCase keys as the Python nanobot writes them.
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiKey: "sk-fake-msteams-e2e-0001", apiBase: llm.openaiBaseURL } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        gateway: { port: gatewayPort },
        channels: {
          msteams: {
            enabled: true,
            appId: TEAMS_APP_ID,
            appPassword: TEAMS_APP_PASSWORD,
            host: "127.0.0.1",
            port: teamsPort,
            path: "/api/messages",
            allowFrom: [alice.id],
            serviceUrl: teams.url,
            openIdMetadataUrl: teams.openIdMetadataUrl,
            loginUrl: teams.loginUrl,
            trustedServiceUrlHosts: ["127.0.0.1"],
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    // Printed once the channels have started; a channel that failed is named on stderr before it.
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    expect(gateway.stderr()).not.toContain("channel msteams failed to start");
    teams.setBotEndpoint(`http://127.0.0.1:${teamsPort}/api/messages`);

    llm.enqueue({ text: "Hello from the model, via Teams." });
    const asked = await teams.userSays({ user: alice, text: "hi bot" });
    const answer = await waitFor(() => teams!.messages.find((m) => m.text === "Hello from the model, via Teams."), "the model's answer in Teams", 60_000);
    expect(answer.conversationId).toBe(teams.dmConversation(alice));
    expect(answer.replyTo).toBe(asked);
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("hi bot");

    const list = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { source: string; channels: Array<Record<string, unknown>> };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "msteams", type: "msteams", enabled: true, connected: true }]);
  }, 120_000);
});
