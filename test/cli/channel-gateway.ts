/**
 * A chat channel end to end: the built CLI's `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling the channel against its platform fake, the scripted fake
 * LLM as the model, and `nanobot channels list --json` asked until the channel reports connected.
 * Each channel's gateway test starts its fake, calls `startChannelGateway`, and drives the platform.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { freePort } from "../mcp/helpers.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

export interface ChannelGatewayOptions {
  /** The channel's name under `channels` (also names the temp folder and the fake API key). */
  channel: string;
  llm: FakeLLM;
  /** The channel's entry, in the Python nanobot's spelling. */
  entry: Record<string, unknown>;
  /** Other top-level config blocks (`tools`, …); `channels` entries here sit beside the channel. */
  config?: Record<string, unknown>;
}

export interface ChannelGateway {
  root: string;
  home: string;
  workspace: string;
  env: Record<string, string>;
  port: number;
  gateway: RunningNanobot;
  /** `nanobot channels list --json` (source: the gateway), once the channel reports connected. */
  listedConnected(): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export async function startChannelGateway(options: ChannelGatewayOptions): Promise<ChannelGateway> {
  const { channel, llm, entry, config = {} } = options;
  const root = await mkdtemp(join(tmpdir(), `nanobot-${channel}-gw-`));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  await mkdir(home, { recursive: true });
  const port = await freePort();
  const { channels: otherChannels, ...rest } = config as { channels?: Record<string, unknown> };
  await writeFile(
    join(home, "config.json"),
    JSON.stringify({
      providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: `sk-fake-${channel}-gw-0001` } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      gateway: { port },
      ...rest,
      channels: { ...otherChannels, [channel]: { enabled: true, ...entry } },
    }),
  );
  const env = { HOME: root, NANOBOT_HOME: home };
  const gateway = startNanobot(["gateway"], { cwd: root, env });
  const close = async (): Promise<void> => {
    await gateway.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    root,
    home,
    workspace,
    env,
    port,
    gateway,
    async listedConnected() {
      let report: { source?: string; channels: Array<Record<string, unknown>> } = { channels: [] };
      for (let i = 0; i < 80 && report.channels.find((c) => c.name === channel)?.connected !== true; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 250));
        const run = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
        expect(run.code, run.stderr).toBe(0);
        report = JSON.parse(run.stdout) as typeof report;
      }
      expect(report.source).toBe("gateway");
      return report.channels;
    },
    close,
  };
}
