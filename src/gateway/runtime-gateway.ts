/**
 * Builds a gateway from a Runtime and its config: the agents that answer, the model shown, the
 * setup help when no provider is configured, and the refusal to listen on a non-loopback
 * host without an API key.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ClusterRelay } from "../cluster/cluster-relay.js";
import type { Runtime } from "../agent/runtime.js";
import { DirectTurnProcessor } from "../agent/turn-processor.js";
import type { TurnProcessor } from "../agent/turn-processor.js";
import { defaultAgentName, isLoopbackHost } from "../config/config-helpers.js";
import { ConfigError } from "../core/errors.js";
import { createGatewayApp } from "./app.js";
import { localNamesFor } from "./host-check.js";
import type { HostPolicy } from "./host-check.js";
import { lazyMcpHttpHandler } from "./mcp/lazy-handler.js";
import { packageVersion } from "../core/version.js";
import { startTracing } from "../core/tracing/setup.js";
import type { TracingHandle } from "../core/tracing/setup.js";
import type { GatewayApp } from "./app.js";
import { startGatewayServer } from "./server.js";
import type { GatewayServer } from "./server.js";
import type { GatewayDeps, WalCheckpointState } from "./types.js";
import type { ChannelListEntry } from "../channels/channel-manager.js";
import { McpWebLogins } from "../mcp/oauth/web-logins.js";
import { needsLoginMessage } from "../mcp/oauth/needs-login.js";

/** `dist/web` from both `src/gateway/` (tsx) and `dist/gateway/` (built). */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL("../../dist/web", import.meta.url));

export interface RuntimeGatewayOptions {
  host?: string;
  port?: number;
  /** Defaults to `DirectTurnProcessor(runtime)`; the AgentLoop when the gateway runs one. */
  processor?: TurnProcessor;
  requestTimeoutMs?: number;
  webRoot?: string;
  /** The chat channels' state for `GET /api/channels` (the assistant gateway's ChannelManager). */
  channels?: () => ChannelListEntry[];
  /** Events of the other workers sharing a PostgreSQL store (the assistant gateway's relay). */
  relay?: ClusterRelay;
  /** The SQLite store's background WAL checkpointer, for `/metrics` (the assistant gateway's). */
  walCheckpointer?: WalCheckpointState;
}

export interface RunningGateway {
  server: GatewayServer;
  gateway: GatewayApp;
  /** Set when no provider/model is configured; say it at start-up too. */
  setupHelp?: string;
  /** What the web UI's notice bar shows now (say it at start-up too). */
  notices: () => string[];
  /** Tracing as the OTEL_* variables set it up (off when they are absent). */
  tracing: TracingHandle;
  /** Graceful shutdown: turns stopped and saved, server closed, runtime closed, spans flushed. */
  close(): Promise<void>;
}

/** Throws ConfigError (exit 2) for a non-loopback host without `gateway.apiKey`. */
export function checkBindAllowed(host: string, apiKey: string | undefined): void {
  if (!isLoopbackHost(host) && !apiKey) {
    throw new ConfigError(
      `refusing to listen on ${host} without an API key: set gateway.apiKey in the config, or bind to 127.0.0.1`,
      { path: "gateway.apiKey", expected: "a secret string when gateway.host is not loopback" },
    );
  }
}

/**
 * Whose requests the gateway serves: loopback names and the bound address (for a wildcard
 * bind, this machine's interface addresses), plus `gateway.allowedHosts`; state-changing
 * requests from its own origin or `gateway.allowedOrigins`.
 */
export function hostPolicyFor(runtime: Runtime, host: string): HostPolicy {
  const { allowedHosts, allowedOrigins } = runtime.config.gateway;
  return { localNames: localNamesFor(host), allowedHosts, allowedOrigins };
}

export function gatewayDepsFor(runtime: Runtime, options: RuntimeGatewayOptions = {}): GatewayDeps {
  const config = runtime.config;
  const defaultName = defaultAgentName(config);
  let modelLabel: string | undefined;
  let setupHelp: string | undefined;
  try {
    modelLabel = runtime.modelRefFor(defaultName ? config.agents.named[defaultName] : undefined);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    setupHelp = err.message;
  }
  const modelProblem = modelLabel !== undefined ? unusableModel(runtime, modelLabel) : undefined;
  const webRoot = options.webRoot ?? DEFAULT_WEB_ROOT;
  return {
    processor: options.processor ?? new DirectTurnProcessor(runtime),
    agents: Object.keys(config.agents.named),
    store: runtime.store(),
    elicitation: runtime.elicitation,
    apiKey: config.gateway.apiKey,
    setupHelp,
    modelLabel,
    notices: () => [
      ...(modelProblem ? [`the default model ${modelLabel} cannot answer: ${modelProblem}`] : []),
      ...runtime.mcpStartFailures().map((f) => `MCP server ${f.server} failed to start: ${f.reason}`),
    ],
    requestTimeoutMs: options.requestTimeoutMs ?? (config.api?.timeout ? config.api.timeout * 1000 : undefined),
    webRoot: existsSync(webRoot) ? webRoot : undefined,
    hostPolicy: hostPolicyFor(runtime, options.host ?? config.gateway.host),
    observeStore: (listener) => runtime.observeStore(listener),
    log: (level, msg, data) => runtime.logger[level](msg, data),
    ...(options.channels ? { channels: options.channels } : {}),
    ...(options.relay ? { relay: options.relay } : {}),
    walCheckpointer: options.walCheckpointer,
    ...(Object.keys(config.mcpServers).length > 0 ? { mcpLogins: webLoginsFor(runtime) } : {}),
  };
}

/** Logins to remote MCP servers given from the web UI (the redirect comes back to the gateway). */
function webLoginsFor(runtime: Runtime): McpWebLogins {
  return new McpWebLogins({
    home: runtime.home,
    env: runtime.env,
    servers: () => runtime.config.mcpServers,
    needed: () => runtime.mcpStartFailures().filter((f) => f.reason.includes(needsLoginMessage(f.server))).map((f) => f.server),
    reconnect: (server) => runtime.reconnectMcp(server),
    log: (level, msg, data) => runtime.logger[level](msg, data),
  });
}

/** Why the model cannot be used (no key for its provider, no base URL, …), without calling it. */
export function unusableModel(runtime: Runtime, modelRef: string): string | undefined {
  try {
    runtime.registry.resolveTarget(modelRef);
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

export async function startRuntimeGateway(runtime: Runtime, options: RuntimeGatewayOptions = {}): Promise<RunningGateway> {
  const host = options.host ?? runtime.config.gateway.host;
  const port = options.port ?? runtime.config.gateway.port;
  checkBindAllowed(host, runtime.config.gateway.apiKey);
  const deps = gatewayDepsFor(runtime, options);
  // OTEL_* from the runtime's environment; unconfigured, this loads and creates nothing.
  const tracing = await startTracing({ env: runtime.env, warn: (message) => runtime.logger.warn(message) });
  if (tracing.enabled) runtime.logger.info("exporting traces over OTLP/HTTP", { endpoint: tracing.endpoint });
  const mcp = lazyMcpHttpHandler({
    processor: deps.processor,
    config: runtime.config,
    loadMessages: (key) => runtime.store().loadMessages(key),
    version: packageVersion(),
    // publish.introduction and the re-exported MCP tools, prompts and resources.
    source: runtime,
    ...deps.hostPolicy,
    log: (level, msg, data) => runtime.logger[level](msg, data),
  });
  const gateway = createGatewayApp({ ...deps, mcpHandler: mcp });
  const server = await startGatewayServer({ gateway, host, port, hostPolicy: deps.hostPolicy }).catch(async (err: unknown) => {
    await tracing.shutdown();
    throw err;
  });
  let closing: Promise<void> | undefined;
  return {
    server,
    gateway,
    tracing,
    setupHelp: deps.setupHelp,
    notices: deps.notices ?? (() => []),
    close: () =>
      (closing ??= (async () => {
        deps.mcpLogins?.close();
        await server.close();
        await mcp.close();
        await runtime.close();
        await tracing.shutdown();
      })()),
  };
}
