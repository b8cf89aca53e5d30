/**
 * The whole assistant behind one gateway: the message bus, the AgentLoop (which every face —
 * HTTP API, web UI, /mcp, channels, cron — goes through), the cron service with its system
 * jobs (Dream, heartbeat), and the enabled chat channels. On a cluster sharing a PostgreSQL
 * store, cron and the polling/socket channels run on the elected leader, the webhook channels
 * on every worker (channels/placement.ts). Shutdown runs in reverse.
 */
import { AgentLoop } from "../agent/agent-loop.js";
import { createCronRunner, installSystemJobs } from "../agent/cron-bridge.js";
import type { Runtime } from "../agent/runtime.js";
import { InProcessBus } from "../bus/in-process-bus.js";
import { ChannelManager, configuredChannels } from "../channels/channel-manager.js";
import { SharedDedup } from "../channels/delivery/inbound-dedup.js";
import type { ChannelListEntry, ChannelStartResult } from "../channels/channel-manager.js";
import { defaultChannelFactories } from "../channels/factories.js";
import { TOPIC_TURN } from "../cluster/cluster-relay.js";
import { errorMessage } from "../core/errors.js";
import { CronService } from "../cron/cron-service.js";
import { cronJobsPath } from "../cron/cron-store.js";
import { SqliteSessionStore } from "../session/sqlite-store.js";
import type { SessionStore, Singletons } from "../session/types.js";
import { startRuntimeGateway } from "./runtime-gateway.js";
import type { RunningGateway } from "./runtime-gateway.js";

/** The leadership that runs cron and the channels. */
export const SINGLETONS_GROUP = "gateway";

export interface AssistantGatewayOptions {
  host?: string;
  port?: number;
  /** Called after `/restart` was answered (the CLI restarts the process). */
  onRestart?: () => void | Promise<void>;
}

export interface RunningAssistant {
  gateway: RunningGateway;
  loop: AgentLoop;
  cron: CronService;
  channels: ChannelManager;
  channelResults: ChannelStartResult[];
  close(): Promise<void>;
}

export async function startAssistantGateway(runtime: Runtime, options: AssistantGatewayOptions = {}): Promise<RunningAssistant> {
  const { logger } = runtime;
  // A server commits all day: the WAL is folded into the database by a worker, not by a request.
  const store = runtime.store();
  const walCheckpointer = store instanceof SqliteSessionStore ? store.checkpointInBackground() : undefined;
  const bus = new InProcessBus();
  bus.onError((e) => logger.error(`bus: ${e.type}`, { channel: e.channel, error: errorMessage(e.error) }));
  const loop = new AgentLoop({ runtime, bus, onRestart: options.onRestart });
  loop.onError((e) => logger.error(`agent loop: ${e.type}`, { sessionKey: e.sessionKey, error: errorMessage(e.error) }));
  const cron = new CronService({ path: cronJobsPath(runtime.home), run: createCronRunner({ loop, bus }), logger });
  loop.useCron(cron);
  installSystemJobs(cron, runtime.config);

  // Workers sharing a PostgreSQL store relay turn completions (for `/api/events`) and
  // WebSocket-channel messages to each other (see cluster/cluster-relay.ts).
  const leadership = (store as SessionStore).leadership?.(SINGLETONS_GROUP);
  const relay = leadership ? (store as SessionStore).eventRelay?.() : undefined;
  if (relay) {
    await relay.start();
    loop.observers.subscribe((event) => relay.publish(TOPIC_TURN, event));
  }

  // The channels start after the server (WebSocket shares it); until then the list reads the config.
  const started: { manager?: ChannelManager } = {};
  const list = (): ChannelListEntry[] => started.manager?.list() ?? configuredChannels(runtime.config.channels).map((c) => ({ ...c, connected: false }));
  const gateway = await startRuntimeGateway(runtime, {
    host: options.host,
    port: options.port,
    processor: loop,
    channels: list,
    walCheckpointer,
    ...(relay ? { relay } : {}),
  });
  const claimDelivery = (store as SessionStore).claimDelivery?.bind(store);
  const channels = new ChannelManager({
    bus,
    channels: runtime.config.channels,
    home: runtime.home,
    factories: defaultChannelFactories(),
    logger,
    httpServer: gateway.server.httpServer,
    ...(relay ? { relay } : {}),
    ...(claimDelivery ? { dedup: new SharedDedup(claimDelivery, logger) } : {}),
  });
  started.manager = channels;
  // Cron (with heartbeat and Dream) and the polling/socket channels run on one worker of a
  // cluster sharing a PostgreSQL store: its elected leader. The channels served on the gateway's
  // own port (Slack's Events API, WebSocket) run on every worker, from the start to the close
  // (see channels/placement.ts). A single process leads alone and starts them all at once.
  const stopChannels = new AbortController();
  const report = (results: ChannelStartResult[]): ChannelStartResult[] => {
    for (const r of results) {
      if (r.ok) logger.info(`channel ${r.name} started`);
      else logger.error(`channel ${r.name} failed to start: ${r.error ?? "unknown error"}`);
    }
    return results;
  };
  let channelResults: ChannelStartResult[] = [];
  const singletons: Singletons = {
    start: async (term) => {
      const signal = AbortSignal.any([term, stopChannels.signal]);
      channelResults = report(await channels.startAll(signal, leadership ? "leader" : "all"));
      cron.start();
    },
    stop: async () => {
      cron.stop();
      await channels.stopAll(leadership ? "leader" : "all");
    },
  };
  loop.start();
  const everyWorker = leadership ? report(await channels.startAll(stopChannels.signal, "every-worker")) : [];
  if (leadership) await leadership.start(singletons);
  else await singletons.start(stopChannels.signal);
  if (leadership && !leadership.leading) logger.info("another worker leads the cluster: cron and the polling/socket channels run there");

  let closing: Promise<void> | undefined;
  return {
    gateway,
    loop,
    cron,
    channels,
    channelResults: [...everyWorker, ...channelResults],
    close: () =>
      (closing ??= (async () => {
        stopChannels.abort();
        if (leadership) await leadership.stop();
        else await singletons.stop();
        await channels.stopAll("every-worker");
        await loop.stop();
        await gateway.close();
        await relay?.close();
      })()),
  };
}
