/**
 * The composition root: turns a resolved configuration into the parts a turn needs — a provider
 * registry, the session store, MCP connections and, per agent, a ready profile (model,
 * instructions, tools, limits). Faces (CLI, gateway) create one Runtime and share it.
 */
import { mkdirSync } from "node:fs";
import { sessionsDir } from "../config/paths.js";
import { defaultAgentName } from "../config/config-helpers.js";
import type { AgentConfig, NanobotConfig } from "../config/index.js";
import { ConfigError, errorMessage } from "../core/errors.js";
import type { LanguageModel, ReasoningEffort, ToolChoice } from "../core/llm.js";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import type { McpClientManager } from "../mcp/manager.js";
import type { McpServerFailure } from "../mcp/types.js";
import { ElicitationRouter } from "../mcp/elicitation-router.js";
import { createProviderRegistry } from "../providers/registry.js";
import type { ProviderRegistry } from "../providers/registry.js";
import type { FetchFunction } from "../providers/types.js";
import { toRequestOutput } from "../providers/structured-output.js";
import { openSessionStore, storeLocation } from "../session/open-store.js";
import type { PortableSessionStore } from "../session/records.js";
import { timedStore } from "../session/timed-store.js";
import type { StoreCallListener } from "../session/timed-store.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import type { SendMessage } from "../tools/builtin/message.js";
import type { Tool } from "../tools/tool.js";
import { buildDefaultInstructions } from "./default-instructions.js";
import { resolveDynamicText } from "./agent-instructions.js";
import { MAX_TOOL_OUTPUT_BYTES } from "../engine/tool-execution/truncate.js";
import { sharedTokenEstimator } from "../engine/tokens/estimator.js";
import type { TokenEstimator } from "../engine/tokens/estimator.js";
import type { MessageTokenCounter } from "../core/token-counts.js";
import { toolNamingFor } from "./go-hooks.js";
import { goDefaultOutputLimit } from "./go-max-tokens.js";
import { isBuiltinAllowed } from "./permissions.js";
import { createSubagentTools } from "./subagent-tools.js";
import { createSamplingHandler } from "./mcp-sampling.js";
import { detectLocalModel } from "./local-provider.js";
import { FALLBACK_MODELS } from "./default-models.js";
import { activeSelection, defaultSelection, fallbackSelection, findPreset } from "../config/model-presets.js";
import type { ModelSelection } from "../config/model-presets.js";
import { withFallback } from "../providers/fallback.js";
import { llmTimeoutMs, streamingTimeoutMs } from "../providers/llm-timeout.js";
import { withGeneration } from "../providers/registry.js";

export { FALLBACK_MODELS } from "./default-models.js";

export const NO_PROVIDER_HELP =
  "no LLM provider is configured: run `nanobot onboard`, set OPENAI_API_KEY or ANTHROPIC_API_KEY, " +
  'or add providers.custom.apiBase (e.g. a local Ollama at "http://127.0.0.1:11434/v1") to the config';

/** Everything one agent needs for a turn, resolved from config. */
export interface AgentProfile {
  /** The agent's name; `undefined` for the plain `agents.defaults` assistant. */
  name?: string;
  modelRef: string;
  /** The model preset in use (`default` = the direct agents.defaults fields); none for an agent's own model. */
  modelPreset?: string;
  model: LanguageModel;
  /** System prompt text (dynamic instructions already expanded for this turn). */
  instructions: string;
  tools: Tool[];
  /** The output limit sent with each request, and kept free of the window in the budgets. */
  maxTokens: number;
  /** True: requests carry no output limit (a Go-style agent on OpenAI Responses that sets none). */
  omitMaxTokens?: boolean;
  contextWindow: number;
  /** Undefined: none is sent (a Go-style agent that sets none). */
  temperature: number | undefined;
  maxToolIterations: number;
  maxToolResultChars: number;
  reasoningEffort?: ReasoningEffort;
  /** Go agent fields that reach the provider request as written. */
  reasoningSummary?: string;
  topP?: number;
  truncation?: string;
  toolExtensions?: Record<string, Record<string, unknown>>;
  toolChoice?: ToolChoice;
  output?: { name?: string; schema: Record<string, unknown> };
  config: AgentConfig | undefined;
  /** Tool references in the agent config that matched nothing (reported, not fatal). */
  unresolvedTools: string[];
}

export interface RuntimeOptions {
  config: NanobotConfig;
  home: string;
  /** The config file read, hidden from sandboxed commands like the home. */
  configPath?: string;
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** HTTP seam for providers (tests). */
  fetch?: FetchFunction;
  /** Delivery seam for the `message` tool. */
  sendMessage?: SendMessage;
  /** Skip MCP connections (commands that never call tools). */
  connectMcp?: boolean;
}

export class Runtime {
  readonly config: NanobotConfig;
  readonly home: string;
  readonly env: Record<string, string | undefined>;
  readonly logger: Logger;
  readonly registry: ProviderRegistry;
  readonly workspace: string;
  private storeInstance: PortableSessionStore | undefined;
  private readonly storeListeners = new Set<StoreCallListener>();
  /** Built-in tool sets by enabled-list; building one costs ~10 ms (schemas), so turns reuse them. */
  private readonly builtinCache = new Map<string, Tool[]>();
  /** MCP servers added by `config` hooks (src/agent/go-hooks.ts). */
  private readonly hookServers = new Set<string>();
  private mcpPromise: Promise<McpClientManager> | undefined;
  private mcpFailed: McpServerFailure[] = [];
  /** Faces that can ask the user (web UI, interactive CLI) register here while their turn runs. */
  readonly elicitation: ElicitationRouter;
  private localModelRef: string | undefined;
  private readonly options: RuntimeOptions;

  constructor(options: RuntimeOptions) {
    this.options = options;
    this.config = options.config;
    this.home = options.home;
    this.env = options.env ?? process.env;
    this.logger = options.logger ?? silentLogger;
    this.workspace = options.config.agents.defaults.workspace;
    this.elicitation = new ElicitationRouter({
      unattended: options.config.mcp.elicitation,
      log: (level, msg, data) => this.logger[level](msg, data),
    });
    this.registry = createProviderRegistry({
      providers: options.config.providers,
      llmProviders: options.config.llmProviders,
      modelPresets: options.config.modelPresets as Record<string, never>,
      env: this.env,
      fetch: options.fetch,
      log: (level, msg, data) => this.logger[level](msg, data),
    });
  }

  /**
   * The session store, opened on first use: SQLite `<home>/state.db`, or PostgreSQL when
   * `store.url` / `NANOBOT_STORE_URL` names one.
   */
  store(): PortableSessionStore {
    if (!this.storeInstance) {
      mkdirSync(this.home, { recursive: true });
      const location = storeLocation({ url: this.config.store?.url, env: this.env, home: this.home });
      const listeners = this.storeListeners;
      const tokenCounter = this.storedTokenCounter();
      this.storeInstance = timedStore(openSessionStore(location, { logger: this.logger, tokenCounter, maxLeaseConnections: this.config.store?.maxLeaseConnections }), (op, ms, ok) => {
        for (const listener of listeners) listener(op, ms, ok);
      });
    }
    return this.storeInstance;
  }

  /**
   * Exact token counts saved with stored messages, so a replayed history is not tokenised again
   * (core/token-counts.ts): by the default model's tokenizer, once a turn has loaded it; none
   * before, or when no default model can be named.
   */
  private storedTokenCounter(): MessageTokenCounter {
    let estimator: TokenEstimator | null | undefined;
    return (message) => {
      if (estimator === undefined) {
        try {
          estimator = sharedTokenEstimator(this.modelRefFor(undefined));
        } catch {
          estimator = null;
        }
      }
      try {
        return estimator?.exact(message);
      } catch (err) {
        // A count is an optimisation: a message the tokenizer cannot take is saved without one.
        this.logger.debug("token count not stored", { error: errorMessage(err) });
        return undefined;
      }
    };
  }

  /** Reports every store call (operation, ms, ok) to `listener` (the gateway's `/metrics`); returns the unsubscribe. */
  observeStore(listener: StoreCallListener): () => void {
    this.storeListeners.add(listener);
    return () => this.storeListeners.delete(listener);
  }

  /** Where a session's files (truncated outputs, offloaded results) go. */
  sessionDir(sessionKey: string): string {
    return `${sessionsDir(this.home)}/${sessionKey.replace(/[^A-Za-z0-9_.-]/g, "_")}`;
  }

  /** Connects every configured MCP server once; failures are logged, the rest work. */
  mcp(): Promise<McpClientManager> {
    this.mcpPromise ??= (async () => {
      // The MCP SDK is loaded only when a server is configured (start-up time).
      const [{ McpClientManager }, { oauthDirFor }] = await Promise.all([import("../mcp/manager.js"), import("../mcp/oauth/token-store.js")]);
      const manager = new McpClientManager(this.config.mcpServers, {
        env: this.env,
        sampling: createSamplingHandler(this),
        // Always advertised; declined when the turn's face cannot ask (see ElicitationRouter).
        elicitation: this.elicitation.handle,
        log: (level, msg, data) => this.logger[level](msg, data),
        toolNaming: toolNamingFor(this.config),
        // OAuth tokens from `nanobot mcp login`; a server needing a login reports so (no browser here).
        oauthDir: oauthDirFor(this.home),
      });
      const failures = this.options.connectMcp === false ? [] : await manager.start();
      for (const f of failures) this.logger.warn(`MCP server ${f.server} failed to start: ${f.reason}`);
      this.mcpFailed = failures;
      return manager;
    })();
    return this.mcpPromise;
  }

  /**
   * Connects the configured MCP servers now (faces that want to report failures at start) and
   * returns the ones that failed to start, with the cause. Nothing configured: nothing to do.
   */
  async startMcp(): Promise<McpServerFailure[]> {
    if (Object.keys(this.config.mcpServers).length === 0 || this.options.connectMcp === false) return [];
    return (await this.mcp()).failures();
  }

  /**
   * Connects a configured MCP server again (after an OAuth login from the web UI): its tools are
   * there from the next turn on. Resolves with the failure, if it still cannot connect.
   */
  async reconnectMcp(name: string): Promise<string | undefined> {
    const spec = this.config.mcpServers[name];
    if (!spec) return `no MCP server named ${name} in the config`;
    const manager = await this.mcp();
    await manager.removeServer(name);
    const failure = await manager.addServer(name, spec);
    this.mcpFailed = this.mcpFailed.filter((f) => f.server !== name);
    if (failure !== undefined) {
      await manager.removeServer(name);
      this.mcpFailed.push({ server: name, reason: failure });
    }
    return failure;
  }

  /** MCP servers that failed to start, once their start finished (empty before, and when none failed). */
  mcpStartFailures(): McpServerFailure[] {
    return [...this.mcpFailed];
  }

  /**
   * With no provider configured at all, looks for a local OpenAI-compatible server (Ollama) and
   * uses its first model. Returns the model reference it found, if any. Faces call it once at start.
   */
  async detectLocalProvider(): Promise<string | undefined> {
    const defaults = this.config.agents.defaults;
    if (defaults.model || defaults.modelPreset || this.registry.configuredProviders().length > 0) return undefined;
    const local = await detectLocalModel(this.env, this.options.fetch);
    if (!local) return undefined;
    this.localModelRef = `${local.provider}/${local.model}`;
    this.logger.info(`using the local model server at ${local.baseURL} (${local.model})`);
    return this.localModelRef;
  }

  /**
   * The model reference an agent uses: its own, else the session's `/model` preset, else
   * `agents.defaults.modelPreset`, else the defaults' model, else one per configured provider.
   */
  modelRefFor(agent: AgentConfig | undefined, sessionPreset?: string): string {
    return this.selectionFor(agent, sessionPreset).modelRef;
  }

  /**
   * Which model and generation settings a turn uses (src/config/model-presets.ts). A named
   * agent's own `model` wins unless the session picked a preset; it keeps the direct defaults'
   * fields underneath its own, since a preset's settings belong to the preset's model.
   */
  selectionFor(agent: AgentConfig | undefined, sessionPreset?: string): ModelSelection {
    if (!sessionPreset && agent?.model) {
      const ref = agent.provider && !agent.model.includes("/") ? `${agent.provider}/${agent.model}` : agent.model;
      return { ...(defaultSelection(this.config, ref) as ModelSelection), modelRef: ref };
    }
    const selection = activeSelection(this.config, sessionPreset, this.config.agents.defaults.model ? undefined : this.unnamedModelRef());
    if (selection) return selection;
    const configured = this.registry.configuredProviders();
    throw new ConfigError(
      configured.length > 0
        ? `no model configured: set agents.defaults.model (e.g. "${configured[0]}/<model>")`
        : NO_PROVIDER_HELP,
      { path: "agents.defaults.model", expected: "provider/model" },
    );
  }

  /** With no model named anywhere: the detected local model, or a known model of a configured provider. */
  private unnamedModelRef(): string | undefined {
    if (this.localModelRef) return this.localModelRef;
    for (const provider of this.registry.configuredProviders()) {
      const model = FALLBACK_MODELS[provider];
      if (model) return `${provider}/${model}`;
    }
    return undefined;
  }

  /**
   * Connects an MCP server a Go `config` hook named (by URL, as Go allows) so the agent it
   * returned can use its tools. Resolves with the failure reason, if any.
   */
  async addHookServer(name: string, spec: { url: string; headers?: Record<string, string> }): Promise<string | undefined> {
    if (this.config.mcpServers[name]) return undefined;
    const failure = await (await this.mcp()).addServer(name, { type: "http", ...spec });
    if (failure === undefined) this.hookServers.add(name);
    return failure;
  }

  /**
   * Resolves the named agent (or the default one) into a profile ready for a turn.
   * `overrides.modelPreset` (the session's `/model` choice; `default` = the direct fields) brings
   * the preset's model, window, max tokens, temperature and reasoning effort; `overrides.modelRef`
   * replaces the model only (a preset name there works like `modelPreset`).
   */
  async resolveAgent(name?: string, overrides: { modelRef?: string; modelPreset?: string; agent?: AgentConfig } = {}): Promise<AgentProfile> {
    const named = this.config.agents.named;
    const agentName = name && name !== "nanobot" ? name : defaultAgentName(this.config);
    if (name && name !== "nanobot" && !named[name]) {
      const known = ["nanobot", ...Object.keys(named)].join(", ");
      throw new ConfigError(`unknown agent "${name}"; known agents: ${known}`, { path: `agents.${name}` });
    }
    // `overrides.agent`: the agent as a Go `config` hook returned it (src/agent/go-hooks.ts).
    const agent = overrides.agent ?? (agentName ? named[agentName] : undefined);
    const defaults = this.config.agents.defaults;
    const override = overrides.modelRef;
    let sessionPreset = override !== undefined && findPreset(this.config, override) ? override : undefined;
    if (overrides.modelPreset !== undefined) {
      // A session's saved choice whose preset was since removed from the config: follow the
      // config again, as Python does, instead of failing every turn.
      if (findPreset(this.config, overrides.modelPreset)) sessionPreset = overrides.modelPreset;
      else this.logger.warn(`the session's model preset "${overrides.modelPreset}" is no longer in modelPresets; using the configured model`);
    }
    const selected = this.selectionFor(agent, sessionPreset);
    // A preset's settings apply as a whole; otherwise the agent's own fields go over the defaults'.
    const own = sessionPreset !== undefined ? undefined : agent;
    const selection: ModelSelection = {
      ...selected,
      modelRef: override !== undefined && sessionPreset === undefined ? override : selected.modelRef,
      maxTokens: own?.maxTokens ?? selected.maxTokens,
      contextWindow: own?.contextWindow ?? selected.contextWindow,
      temperature: own?.temperature ?? selected.temperature,
    };
    const modelRef = selection.modelRef;
    const wallTimeoutMs = llmTimeoutMs(defaults.llmTimeoutS, this.env);
    const retry = { mode: defaults.providerRetryMode, wallTimeoutMs, streamingWallTimeoutMs: streamingTimeoutMs(wallTimeoutMs) };
    const resolveOptions = { retry, contextWindow: selection.contextWindow };
    const primary = this.registry.resolveModel(modelRef, resolveOptions);
    // Fallbacks by preset name bring their own settings (Python's rule; see fallbackSelection).
    const model =
      defaults.fallbackModels.length > 0
        ? withFallback([
            primary,
            ...defaults.fallbackModels.map((entry) => {
              const fb = fallbackSelection(this.config, entry, selection);
              return withGeneration(this.registry.resolveModel(fb.modelRef, { retry, contextWindow: fb.contextWindow }), fb);
            }),
          ])
        : primary;
    const { tools, unresolved } = await this.toolsFor(agent);
    const subagents = [...(agent?.agents ?? []), ...agentToolRefs(agent?.tools, named, this.serverNames())];
    // Go dynamic instructions (`${…}`, an MCP prompt) are resolved for each turn's profile.
    const instructions =
      agent?.instructions !== undefined
        ? await resolveDynamicText(this, agent.instructions, `agents.${agentName ?? "nanobot"}.instructions`)
        : buildDefaultInstructions({ workspace: this.workspace, timezone: defaults.timezone });
    const output = agent?.output ? toRequestOutput(agent.output) : undefined;
    // A named agent is the Go dialect: without maxTokens (its own or written in agents.defaults)
    // it sends what Go's adapter for the provider's API sends.
    const limit =
      own && own.maxTokens === undefined && defaults.maxTokens === undefined ? goDefaultOutputLimit(this.registry.resolveTarget(modelRef).target.api) : { maxTokens: selection.maxTokens };
    return {
      name: agentName,
      modelRef,
      model,
      instructions,
      // `agents: [other]`, or an agent named in `tools` (Go), adds a chat-with-<other> tool that
      // runs that agent with its own tools.
      tools: subagents.length ? [...tools, ...createSubagentTools(this, agent, undefined, subagents)] : tools,
      modelPreset: sessionPreset !== undefined || !agent?.model ? selection.preset : undefined,
      maxTokens: limit.maxTokens,
      ...(limit.omit ? { omitMaxTokens: true } : {}),
      contextWindow: selection.contextWindow,
      // A named agent is the Go dialect: Go sends no temperature unless the agent sets one (or
      // agents.defaults.temperature is written in the file); Python's 0.1 is for agents.defaults.
      temperature: own ? (own.temperature ?? defaults.temperature) : selection.temperature,
      maxToolIterations: agent?.maxToolIterations ?? defaults.maxToolIterations,
      // A named agent is the Go dialect: results are cut at 50 KiB only (tool-execution/truncate),
      // never offloaded again at the Python `maxToolResultChars`.
      maxToolResultChars: agent ? MAX_TOOL_OUTPUT_BYTES : defaults.maxToolResultChars,
      reasoningEffort: own?.reasoningEffort ?? own?.reasoning?.effort ?? selection.reasoningEffort,
      ...(agent?.reasoning?.summary ? { reasoningSummary: agent.reasoning.summary } : {}),
      ...(agent?.topP !== undefined ? { topP: agent.topP } : {}),
      ...(agent?.truncation ? { truncation: agent.truncation } : {}),
      ...(agent?.toolExtensions ? { toolExtensions: agent.toolExtensions } : {}),
      toolChoice: parseToolChoice(agent?.toolChoice),
      output,
      config: agent,
      unresolvedTools: unresolved,
    };
  }

  /**
   * Built-in tools filtered by the agent's `tools` list, plus MCP tools: the agent's
   * `mcpServers` (Go style), or every server for the defaults assistant (Python style).
   */
  private async toolsFor(agent: AgentConfig | undefined): Promise<{ tools: Tool[]; unresolved: string[] }> {
    const cfg = this.config.tools;
    const refs = agent?.tools;
    const serverNames = this.serverNames();
    // `tools: [server]` names a whole MCP server (Go nanobot), `tools: [agent]` another agent
    // (agentToolRefs); any other bare name is a built-in.
    const isMcpRef = (r: string): boolean => r.includes("/") || serverNames.includes(r);
    const agentRefs = new Set(agentToolRefs(refs, this.config.agents.named, serverNames));
    const builtinNames = refs?.filter((r) => !isMcpRef(r) && !agentRefs.has(r));
    const cacheKey = builtinNames ? JSON.stringify(builtinNames) : "*";
    let builtins = this.builtinCache.get(cacheKey);
    if (!builtins) {
      builtins = createBuiltinTools({
        workspace: this.workspace,
        restrictToWorkspace: cfg.restrictToWorkspace,
        exec: cfg.exec,
        nanobotHome: this.home,
        ...(this.options.configPath ? { configPath: this.options.configPath } : {}),
        env: this.env,
        web: { enable: cfg.web.enable, search: cfg.web.search as never, ...(cfg.web.userAgent ? { fetch: { userAgent: cfg.web.userAgent } } : {}) },
        ssrfWhitelist: cfg.ssrfWhitelist,
        sendMessage: this.options.sendMessage,
        enabled: refs ? builtinNames : undefined,
      });
      this.builtinCache.set(cacheKey, builtins);
    }
    if (agent?.permissions) builtins = builtins.filter((t) => isBuiltinAllowed(agent.permissions, t.name));
    if (serverNames.length === 0) return { tools: builtins, unresolved: [] };
    const mcpRefs = agent ? [...(agent.mcpServers ?? []), ...(refs?.filter(isMcpRef) ?? [])] : serverNames;
    if (mcpRefs.length === 0) return { tools: builtins, unresolved: [] };
    const manager = await this.mcp();
    const { selectTools } = await import("../mcp/select-tools.js");
    const selected = selectTools(manager, mcpRefs);
    return { tools: [...builtins, ...selected.tools], unresolved: selected.unresolved };
  }

  private serverNames(): string[] {
    return [...Object.keys(this.config.mcpServers), ...this.hookServers];
  }

  async close(): Promise<void> {
    if (this.mcpPromise) {
      const manager = await this.mcpPromise.catch(() => undefined);
      await manager?.close();
    }
    await this.storeInstance?.close();
    this.storeInstance = undefined;
  }
}

/** The bare `tools` entries that name another agent (and no MCP server): Go offers each as `chat-with-<agent>`. */
function agentToolRefs(refs: readonly string[] | undefined, named: Record<string, unknown>, serverNames: readonly string[]): string[] {
  return (refs ?? []).filter((r) => !r.includes("/") && named[r] !== undefined && !serverNames.includes(r));
}

function parseToolChoice(value: string | undefined): ToolChoice | undefined {
  if (!value) return undefined;
  if (value === "auto" || value === "none" || value === "required") return value;
  return { name: value };
}
