/**
 * Owns every configured MCP server for one process: connects them in parallel at startup,
 * reports the ones that failed (the others keep working) and exposes their tools, prompts and
 * resources as core `Tool`s under names the model can use.
 */
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import { AbortedError, errorMessage } from "../core/errors.js";
import { scrubSecretText } from "../core/scrub.js";
import type { Tool, ToolOutput } from "../tools/tool.js";
import { McpConnection } from "./connection.js";
import type { ProgressFn } from "./connection.js";
import { fitToolName, shortHash } from "./names.js";
import type { HookCaller } from "./hooks.js";
import { mapCallToolResult } from "./result-mapping.js";
import { DEFAULT_TOOL_TIMEOUT_MS, buildServerTools, toolTimeoutMs, unmatchedEnabledTools } from "./tool-adapters.js";
import type { McpToolEntry } from "./tool-adapters.js";
import type { McpManagerOptions, McpServerFailure, McpServersConfig } from "./types.js";

const DEFAULT_CONNECT_TIMEOUT_MS = 20_000;
const DEFAULT_RETRY_DELAY_MS = 1_000;

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface ManagerCallOptions {
  signal?: AbortSignal;
  onProgress?: ProgressFn;
  /** Overrides the server's `toolTimeout`. */
  timeoutMs?: number;
  /** Session key of the turn making the call (whom an elicitation meanwhile asks). */
  caller?: string;
  /** Skip the server's MCP message hooks (hook tools themselves are called this way). */
  withoutMessageHooks?: boolean;
}

export class McpClientManager {
  private readonly connections = new Map<string, McpConnection>();
  private readonly startFailures = new Map<string, string>();
  private entries: McpToolEntry[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly defaultTimeoutMs: number;
  private started?: Promise<McpServerFailure[]>;
  /** How message hooks call their hook tools: directly, so a hook never hooks itself. */
  private readonly hookCaller: HookCaller = (server, tool, args, options) =>
    this.callTool(server, tool, args, { ...options, withoutMessageHooks: true });

  constructor(servers: McpServersConfig, private readonly options: McpManagerOptions = {}) {
    this.defaultTimeoutMs = options.defaultToolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    this.connectionOptions = {
      ...options,
      env: options.env ?? process.env,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      sleep: options.sleep ?? realSleep,
      hookCaller: this.hookCaller,
    };
    for (const [name, spec] of Object.entries(servers)) this.addConnection(name, spec);
  }

  private readonly connectionOptions: ConstructorParameters<typeof McpConnection>[2];

  private readonly resourceListeners = new Set<(server: string, uri: string) => void>();

  /** Called with the server and URI of every resource update a server reports; returns the unsubscribe. */
  onResourceUpdated(listener: (server: string, uri: string) => void): () => void {
    this.resourceListeners.add(listener);
    return () => this.resourceListeners.delete(listener);
  }

  private addConnection(name: string, spec: McpServersConfig[string]): McpConnection {
    const conn = new McpConnection(name, spec, this.connectionOptions);
    conn.onChange(() => this.rebuild());
    conn.onResourceUpdated((uri) => {
      for (const listener of this.resourceListeners) listener(name, uri);
    });
    this.connections.set(name, conn);
    return conn;
  }

  /**
   * Adds a server after start (a Go `config` hook may name more, by URL) and connects it.
   * A name already connected is kept as it is. Resolves with the failure reason, if any.
   */
  async addServer(name: string, spec: McpServersConfig[string]): Promise<string | undefined> {
    if (this.connections.has(name)) return undefined;
    const conn = this.addConnection(name, spec);
    try {
      await conn.ensureConnected();
      return undefined;
    } catch (err) {
      this.startFailures.set(name, errorMessage(err));
      return errorMessage(err);
    } finally {
      this.rebuild();
    }
  }

  /**
   * Disconnects a server and drops its tools (`/mcp disconnect`); `addServer` connects it again.
   * Returns false when there is no such server.
   */
  async removeServer(name: string): Promise<boolean> {
    const conn = this.connections.get(name);
    if (!conn) return false;
    this.connections.delete(name);
    this.startFailures.delete(name);
    this.rebuild();
    await conn.close();
    return true;
  }

  /** Creates a manager and connects every server; failures are in `failures()`. */
  static async connect(servers: McpServersConfig, options: McpManagerOptions = {}): Promise<McpClientManager> {
    const manager = new McpClientManager(servers, options);
    await manager.start();
    return manager;
  }

  /** Connects all servers in parallel (once); resolves with the ones that failed. */
  start(): Promise<McpServerFailure[]> {
    this.started ??= Promise.all(
      [...this.connections.values()].map(async (conn) => {
        try {
          await conn.ensureConnected();
          this.startFailures.delete(conn.name);
          const unmatched = unmatchedEnabledTools(conn);
          if (unmatched.length > 0) this.options.log?.("warn", "MCP enabledTools entries name no tool of the server", { server: conn.name, entries: unmatched.join(", ") });
        } catch (err) {
          // The reason quotes the server's stderr and URL; every printer (CLI, web UI notice, logs) shows it.
          this.startFailures.set(conn.name, scrubSecretText(errorMessage(err)));
          this.options.log?.("warn", "MCP server failed to start", { server: conn.name, error: errorMessage(err) });
        }
      }),
    ).then(() => {
      this.rebuild();
      return this.failures();
    });
    return this.started;
  }

  /** Servers that could not be started, with the reason. */
  failures(): McpServerFailure[] {
    return [...this.startFailures].map(([server, reason]) => ({ server, reason }));
  }

  /** `mcp_<server>_<tool>` (Python-style configs) or the Go nanobot's bare names. */
  get toolNaming(): "python" | "go" {
    return this.options.toolNaming ?? "python";
  }

  serverNames(): string[] {
    return [...this.connections.keys()];
  }

  connection(server: string): McpConnection | undefined {
    return this.connections.get(server);
  }

  /** Every tool of every connected server, as the model sees them. */
  tools(): Tool[] {
    return this.entries.map((e) => e.tool);
  }

  toolEntries(): McpToolEntry[] {
    return [...this.entries];
  }

  /** Looks up an entry by the MCP-side name (`kind` defaults to a real tool). */
  findEntry(server: string, sourceName: string, kind: McpToolEntry["kind"] = "tool"): McpToolEntry | undefined {
    return (
      this.entries.find((e) => e.server === server && e.kind === kind && e.sourceName === sourceName) ??
      // Go references name a tool as the server lists it after `toolOverrides` / `toolPrefix`.
      this.entries.find((e) => e.server === server && e.kind === kind && e.exposedName === sourceName)
    );
  }

  /** The server's `instructions` from its initialize result. */
  instructions(server: string): string | undefined {
    return this.connections.get(server)?.listing.instructions;
  }

  /** Called whenever a server's listing changes; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls a tool by its MCP name (hooks, UI actions), ignoring `enabledTools`. Failures come
   * back as `isError` output; only an abort throws.
   */
  async callTool(server: string, tool: string, args: Record<string, unknown>, options: ManagerCallOptions = {}): Promise<Exclude<ToolOutput, string>> {
    const conn = this.connections.get(server);
    if (!conn) return { content: [{ type: "text", text: `Unknown MCP server '${server}'` }], isError: true };
    try {
      const callOptions = {
        timeoutMs: options.timeoutMs ?? toolTimeoutMs(conn, this.defaultTimeoutMs),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(options.caller ? { caller: options.caller } : {}),
        // The server's message hooks run on its transport (src/mcp/hooked-transport.ts).
        ...(options.withoutMessageHooks ? { unhooked: true } : {}),
      };
      return mapCallToolResult(await conn.callTool(tool, args, callOptions));
    } catch (err) {
      if (err instanceof AbortedError) throw err;
      return { content: [{ type: "text", text: errorMessage(err) }], isError: true };
    }
  }

  /** `prompts/get` on a server; throws when the server is unknown or the call fails. */
  async getPrompt(server: string, name: string, args: Record<string, string> = {}, signal?: AbortSignal): Promise<GetPromptResult> {
    const conn = this.connections.get(server);
    if (!conn) throw new Error(`Unknown MCP server '${server}'`);
    return conn.getPrompt(name, args, signal);
  }

  /** Closes every connection; stdio servers are terminated. */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    this.entries = [];
    this.listeners.clear();
  }

  /** Recomputes the exposed tools; a name already taken gets a hash of its origin appended. */
  private rebuild(): void {
    const naming = this.options.toolNaming ?? "python";
    const built = [...this.connections.values()].flatMap((conn) => buildServerTools(conn, this.defaultTimeoutMs, naming));
    const used = new Set<string>();
    const entries: McpToolEntry[] = [];
    for (const entry of built) {
      let name = entry.tool.name;
      // Go names stay bare here: whether two clash depends on the agent (see selectTools).
      if (used.has(name) && !(naming === "go" && entry.kind === "tool")) {
        name = fitToolName(`${name.slice(0, 50)}_${shortHash(`${entry.server}/${entry.kind}/${entry.sourceName}`)}`);
        entry.tool.name = name;
      }
      used.add(name);
      entries.push(entry);
    }
    this.entries = entries;
    for (const listener of this.listeners) listener();
  }
}
