/**
 * `nanobot channels list` through the built CLI: read from the config when no gateway runs;
 * asked of the running gateway otherwise, where a Discord channel on the loopback fake shows
 * connected, a Telegram channel with a refused token shows its start error, and a Discord
 * platform that goes away shows up as disconnected.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeBotApi } from "../channels/helpers/fake-bot-api.js";
import type { FakeBotApi } from "../channels/helpers/fake-bot-api.js";
import { DISCORD_TOKEN, startFakeDiscord } from "../channels/helpers/fake-discord.js";
import type { FakeDiscord } from "../channels/helpers/fake-discord.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string;
let gateway: RunningNanobot | undefined;
let discord: FakeDiscord | undefined;
let telegram: FakeBotApi | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-channels-list-"));
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await discord?.close();
  discord = undefined;
  await telegram?.close();
  telegram = undefined;
  await rm(root, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const env = (): Record<string, string> => ({ HOME: root, NANOBOT_HOME: join(root, "home") });

interface Report {
  source: "gateway" | "config";
  channels: Array<{ name: string; type: string; enabled: boolean; connected: boolean | null; lastError?: string }>;
}

async function list(): Promise<Report> {
  const run = await runNanobot(["channels", "list", "--json"], { cwd: root, env: env() });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Report;
}

/** The last of up to 40 reports, stopping at the first that `done` accepts. */
async function settled(read: () => Promise<Report>, done: (r: Report) => boolean): Promise<Report> {
  let report = await read();
  for (let i = 0; i < 40 && !done(report); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    report = await read();
  }
  return report;
}

describe("nanobot channels list", () => {
  it("without a running gateway, lists the config's channels with connected unknown", async () => {
    const port = await freePort();
    await writeFile(
      join(root, "nanobot.json"),
      JSON.stringify({
        gateway: { port },
        channels: { sendMaxRetries: 3, discord: { enabled: true, token: "t" }, alerts: { type: "telegram", enabled: false, token: "1:a" } },
      }),
    );
    const report = await list();
    expect(report).toMatchObject({ source: "config" });
    expect(report.channels).toEqual([
      { name: "discord", type: "discord", enabled: true, connected: null },
      { name: "alerts", type: "telegram", enabled: false, connected: null },
    ]);
    const text = await runNanobot(["channels", "list"], { cwd: root, env: env() });
    expect(text.stderr).toContain(`from the config: no gateway answered`);
    expect(text.stdout.split("\n")[0]).toMatch(/^NAME\s+TYPE\s+ENABLED\s+CONNECTED\s+LAST ERROR$/);
    expect(text.stdout).toMatch(/^discord\s+discord\s+yes\s+\?$/m);
    expect(text.stdout).toMatch(/^alerts\s+telegram\s+no\s+-$/m);
  }, 60_000);

  it("asks the running gateway: connected channels, a start error, and a platform that went away", async () => {
    discord = await startFakeDiscord();
    telegram = await startFakeBotApi();
    const port = await freePort();
    await writeFile(
      join(root, "nanobot.json"),
      JSON.stringify({
        // With an API key, the CLI must present it (the route is behind bearer auth).
        gateway: { port, apiKey: "local-key" },
        channels: {
          discord: { enabled: true, token: DISCORD_TOKEN, apiRoot: discord.apiRoot, allowFrom: ["1"] },
          // The fake Bot API refuses any other token with 401.
          telegram: { enabled: true, token: "999:wrong", apiRoot: telegram.url, allowFrom: ["1"] },
        },
      }),
    );
    gateway = startNanobot(["gateway"], { cwd: root, env: env() });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await gateway.waitFor(/channel telegram failed to start: .*401/, 30_000);

    const report = await settled(() => list(), (r) => r.channels[0]?.connected === true);
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([
      { name: "discord", type: "discord", enabled: true, connected: true },
      { name: "telegram", type: "telegram", enabled: true, connected: false, lastError: expect.stringMatching(/401|Unauthorized/) },
    ]);

    await discord.close();
    discord = undefined;
    const after = await settled(() => list(), (r) => r.channels[0]?.connected === false);
    expect(after.channels[0]).toMatchObject({ name: "discord", connected: false });
  }, 120_000);
});
