/** What the gateway needs from the rest of nanobot; tests pass fakes or a real Runtime's parts. */
import type { TurnProcessor } from "../agent/turn-processor.js";
import type { ChannelListEntry } from "../channels/channel-manager.js";
import type { TurnObservers } from "../agent/turn-observers.js";
import type { ClusterRelay } from "../cluster/cluster-relay.js";
import type { ElicitationAsker } from "../mcp/elicitation-router.js";
import type { McpWebLogins } from "../mcp/oauth/web-logins.js";
import type { SessionStore } from "../session/types.js";
import type { StoreCallListener } from "../session/timed-store.js";
import type { HostPolicy } from "./host-check.js";

export type GatewayLog = (level: "debug" | "info" | "warn" | "error", msg: string, data?: Record<string, unknown>) => void;

export interface GatewayDeps {
  /** Runs every turn (the AgentLoop, or `DirectTurnProcessor`). */
  processor: TurnProcessor;
  /** Runtime events (`turn_completed`) streamed on `GET /api/events`; the processor's by default. */
  observers?: TurnObservers;
  /** Events of the other workers sharing a PostgreSQL store (`/api/events`); absent on a single process. */
  relay?: ClusterRelay;
  /** Named agents that may answer besides `nanobot` (the default agent). */
  agents: readonly string[];
  /** The session store, for the web UI's thread list and history. */
  store: SessionStore;
  /** `gateway.apiKey`; when set every route but `/health` and the UI's static files needs it. */
  apiKey?: string;
  /** Set when no provider is configured: the text every reply carries instead of a model answer. */
  setupHelp?: string;
  /** The default agent's model reference, shown by the web UI. */
  modelLabel?: string;
  /** Problems the web UI shows in its notice bar (a model without a usable provider, MCP servers that failed to start). */
  notices?: () => string[];
  /** Per-request turn timeout (default 120 s); a turn that runs longer is stopped and answered with 504. */
  requestTimeoutMs?: number;
  /** Largest accepted request body (default 20 MB). */
  maxBodyBytes?: number;
  /** Built web UI (`dist/web`); without it `/` explains how to build it. */
  webRoot?: string;
  /**
   * Which `Host` names and `Origin`s are this gateway's (loopback names always; the bound
   * address, `gateway.allowedHosts`, `gateway.allowedOrigins`). Listed origins also get CORS.
   */
  hostPolicy?: HostPolicy;
  /** Where the web UI's chat stream registers to be asked when an MCP server elicits (the Runtime's router). */
  elicitation?: { register(sessionKey: string, asker: ElicitationAsker): () => void };
  /** The MCP Streamable HTTP endpoint mounted at `/mcp` (nanobot as an MCP server). */
  mcpHandler?: (request: Request) => Promise<Response>;
  /** The store's call timings for `/metrics` (the Runtime's `observeStore`). */
  observeStore?: (listener: StoreCallListener) => () => void;
  /** The SQLite store's background WAL checkpointer, read by `/metrics` (the assistant gateway starts it). */
  walCheckpointer?: WalCheckpointState;
  log?: GatewayLog;
  /** OAuth logins to remote MCP servers from the web UI (`/api/mcp/...`); absent without MCP servers. */
  mcpLogins?: McpWebLogins;
  /** The chat channels and their connections (`GET /api/channels`); absent when the gateway runs none. */
  channels?: () => ChannelListEntry[];
}

/** What `/metrics` reads of the background WAL checkpointer (see session/wal-checkpointer.ts). */
export interface WalCheckpointState {
  /** Checkpoints it has run. */
  readonly completed: number;
  /** Whether it stopped its timer because nothing was committed (the next commit wakes it). */
  readonly sleeping: boolean;
}

export const DEFAULT_AGENT = "nanobot";
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_BODY_BYTES = 20 * 1024 * 1024;
