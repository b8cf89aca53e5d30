/**
 * The AgentLoop: the product layer's turn processor. It consumes the message bus and serves
 * direct callers (`process`) through the same per-session lanes (one turn at a time per
 * session) and a global concurrency gate. Chat messages that arrive while their session is
 * busy are injected into the running turn at its next boundary; what is left runs as the
 * next turn. `/stop`, `/status` and `/restart` bypass the lanes.
 */
import type { InboundMessage, MessageBus, OutboundMessage } from "../bus/types.js";
import { AbortedError, errorMessage, isAbortError } from "../core/errors.js";
import { newId } from "../core/ids.js";
import { userMessage } from "../core/message-helpers.js";
import type { Message } from "../core/messages.js";
import type { CronService } from "../cron/cron-service.js";
import type { DreamResult } from "../memory/dream.js";
import { ensureWorkspace } from "../memory/workspace.js";
import type { SessionLease } from "../session/types.js";
import { agentThread } from "./agent-thread.js";
import { createBuiltinCommands } from "./commands/builtin.js";
import type { CommandRegistry } from "./commands/registry.js";
import { contentText, isCommandRequest, parseCommand } from "./commands/registry.js";
import { ContextBuilder } from "./context-builder.js";
import { nextGoalRound } from "./goals.js";
import { compactIdleSessions, IDLE_COMPACT_AFTER_MS } from "./idle-compaction.js";
import { inboundTurn } from "./inbound-turn.js";
import type { InboundTurn } from "./inbound-turn.js";
import { LoopHost } from "./loop-host.js";
import { OutboundRelay } from "./outbound-relay.js";
import type { ReplyRoute } from "./outbound-relay.js";
import type { Runtime } from "./runtime.js";
import { Semaphore, maxConcurrentFromEnv } from "./semaphore.js";
import { abortedReply, SessionLanes } from "./session-lanes.js";
import type { Lane, WorkItem } from "./session-lanes.js";
import { SubagentManager, subagentNotice } from "./subagents.js";
import type { SubagentResult } from "./subagents.js";
import { interruptedTurnReply, settleThrownTurn, thrownTurnReply } from "./turn-failure.js";
import { TurnObservers } from "./turn-observers.js";
import { runTurnStages } from "./turn-runner.js";
import { recordTurnReply, withTurnSpan } from "./turn-span.js";
import { activeSpanContext, type Span } from "../core/tracing/tracer.js";
import { buildTurnTools } from "./turn-tools.js";
import type { TurnLoad, TurnOptions, TurnProcessor, TurnReply, TurnRequest } from "./turn-processor.js";

export const DEFAULT_MAX_QUEUE = 20;
/** How often idle sessions are looked for (background compaction). */
const IDLE_CHECK_MS = 60_000;
/**
 * Turns that may be past admission at once, per gate slot: those talking to the model, and as
 * many more with their prompt built and waiting for a slot. Later turns wait before loading
 * their history, so a burst of requests holds requests in memory, not prompts, and a turn's
 * prompt is built from the freshest state when its slot is near.
 */
const ADMITTED_PER_SLOT = 2;

export interface AgentLoopOptions {
  runtime: Runtime;
  /** Needed for `start()` and for replies to bus messages; `process()` works without it. */
  bus?: MessageBus;
  /** Turns running at once across sessions (default `NANOBOT_MAX_CONCURRENT_REQUESTS`, else 3). */
  maxConcurrent?: number;
  /** Messages waiting per session before new ones are merged (20). */
  maxQueuePerSession?: number;
  /** Called after `/restart` answered; without it `/restart` says it is unavailable. */
  onRestart?: () => void | Promise<void>;
  /** Override the package's built-in skills folder (tests). */
  builtinSkillsDir?: string;
  /** Create missing workspace files from templates (default true). */
  createWorkspace?: boolean;
  now?: () => number;
}

/** A failure the loop could not hand to a caller, reported instead of being lost. */
export interface AgentLoopError {
  type: "consume_failed" | "inbound_failed" | "turn_failed" | "delivery_failed" | "compaction_failed";
  error: unknown;
  sessionKey?: string;
  message?: InboundMessage | OutboundMessage;
}

export class AgentLoop implements TurnProcessor {
  readonly runtime: Runtime;
  readonly bus: MessageBus | undefined;
  readonly commands: CommandRegistry;
  readonly context: ContextBuilder;
  readonly subagents: SubagentManager;
  readonly startedAt: number;
  private readonly lanes: SessionLanes;
  private readonly gate: Semaphore;
  /** Turns that may restore and build while the gate is full (see ADMITTED_PER_SLOT). */
  private readonly admission: Semaphore;
  private readonly host: LoopHost;
  private readonly errorHandlers = new Set<(error: AgentLoopError) => void>();
  private consumer: { abort: AbortController; done: Promise<void> } | undefined;
  private cron: CronService | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** `turn_completed` for every turn this loop runs (bus, API, MCP, cron). */
  readonly observers = new TurnObservers();

  constructor(private readonly options: AgentLoopOptions) {
    const { runtime } = options;
    this.runtime = runtime;
    this.bus = options.bus;
    const defaults = runtime.config.agents.defaults;
    const now = options.now ?? Date.now;
    this.startedAt = now();
    if (options.createWorkspace !== false) ensureWorkspace(runtime.workspace);
    this.gate = new Semaphore(options.maxConcurrent ?? maxConcurrentFromEnv(runtime.env));
    this.admission = new Semaphore(this.gate.limit * ADMITTED_PER_SLOT);
    this.lanes = new SessionLanes(options.maxQueuePerSession ?? DEFAULT_MAX_QUEUE);
    this.commands = createBuiltinCommands();
    this.context = new ContextBuilder({
      workspace: runtime.workspace,
      env: runtime.env,
      timezone: defaults.timezone,
      disabledSkills: defaults.disabledSkills,
      now,
      ...(options.builtinSkillsDir ? { builtinSkillsDir: options.builtinSkillsDir } : {}),
    });
    this.subagents = new SubagentManager({
      limit: defaults.maxConcurrentSubagents,
      workspace: runtime.workspace,
      logger: runtime.logger,
      onResult: (result) => this.onSubagentResult(result),
      failOnToolError: defaults.failOnToolError ?? true,
    });
    this.host = new LoopHost({
      runtime,
      commands: this.commands,
      context: this.context,
      subagents: this.subagents,
      lanes: this.lanes,
      startedAt: this.startedAt,
      now,
      onRestart: options.onRestart,
    });
  }

  // ── lifecycle ───────────────────────────────────────────────────────────────────────────

  /** Starts consuming inbound bus messages. */
  start(): void {
    const bus = this.bus;
    if (!bus) throw new Error("AgentLoop.start() needs a bus");
    if (this.consumer) return;
    const abort = new AbortController();
    const done = (async () => {
      while (!abort.signal.aborted) {
        let message: InboundMessage;
        try {
          message = await bus.consumeInbound(abort.signal);
        } catch (error) {
          if (abort.signal.aborted) break;
          this.report({ type: "consume_failed", error });
          // A bus that keeps failing must not spin the CPU.
          await new Promise((resolve) => setTimeout(resolve, 100));
          continue;
        }
        this.accept(message);
      }
    })();
    this.consumer = { abort, done };
    const { idleMs, checkMs } = this.idleSettings();
    if (idleMs > 0) {
      this.idleTimer = setInterval(() => {
        this.compactIdleSessions().catch((error: unknown) => this.report({ type: "compaction_failed", error }));
      }, checkMs);
      this.idleTimer.unref();
    }
  }

  /** Stops consuming, cancels running turns, sub-agents and queued work, and waits for the lanes. */
  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    consumer?.abort.abort();
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = undefined;
    await consumer?.done;
    for (const lane of this.lanes.all()) this.host.stopSession(lane.key);
    this.subagents.cancelAll();
    await this.whenIdle();
  }

  /** Resolves once no session has work and no sub-agent runs (tests, graceful shutdown). */
  async whenIdle(): Promise<void> {
    while (this.lanes.size() > 0 || this.subagents.count() > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Summarises idle sessions down to their last messages (runs every minute once started). */
  compactIdleSessions(now = Date.now()): Promise<string[]> {
    const { idleMs } = this.idleSettings();
    if (idleMs <= 0) return Promise.resolve([]);
    return compactIdleSessions({ runtime: this.runtime, log: this.context.history, now, idleMs, isBusy: (key) => this.lanes.get(key) !== undefined });
  }

  /** `sessionTtlMinutes` (or `idleCompactAfterMinutes`; 0 = never) and `idleCompactCheckIntervalSeconds`. */
  private idleSettings(): { idleMs: number; checkMs: number } {
    const d = this.runtime.config.agents.defaults;
    const minutes = d.sessionTtlMinutes ?? d.idleCompactAfterMinutes;
    const seconds = d.idleCompactCheckIntervalSeconds;
    return {
      idleMs: minutes === undefined ? IDLE_COMPACT_AFTER_MS : minutes * 60_000,
      checkMs: seconds === undefined ? IDLE_CHECK_MS : Math.max(1, seconds) * 1000,
    };
  }

  /** Offers the `cron` tool bound to each turn's session (the service runs jobs through this loop). */
  useCron(service: CronService): void {
    this.cron = service;
  }

  /** Runs Dream now (the `/dream` command and the dream cron job). */
  runDream(signal?: AbortSignal): Promise<DreamResult> {
    return this.host.runDream(signal);
  }

  /** What a session has in flight: a running turn and how many messages wait behind it. */
  sessionState(sessionKey: string): { running: boolean; queued: number } {
    const lane = this.lanes.get(sessionKey);
    return { running: lane?.active !== undefined, queued: lane?.queue.length ?? 0 };
  }

  /** Turns waiting (behind their session's turn, for admission, for a model slot) and sessions with work. */
  load(): TurnLoad {
    return { queued: this.lanes.queued() + this.admission.waiting + this.gate.waiting, activeSessions: this.lanes.size() };
  }

  /** Subscribes to failures the loop could not hand to a caller. */
  onError(handler: (error: AgentLoopError) => void): () => void {
    this.errorHandlers.add(handler);
    return () => {
      this.errorHandlers.delete(handler);
    };
  }

  // ── entries ─────────────────────────────────────────────────────────────────────────────

  /**
   * One turn for a direct caller (CLI, HTTP API, MCP, cron), through the session's lane. A turn
   * that fails, in the engine or in any stage around it, resolves with an error reply
   * (`stopReason: "error"`, `error` set); the promise does not reject for it.
   */
  process(request: TurnRequest, options: TurnOptions = {}): Promise<TurnReply> {
    const text = contentText(request.content);
    if (this.commands.isPriority(text)) return this.runPriority(request, text);
    // Go agents: `threadName` has its own thread in the session, `chat: false` none at all.
    const thread = agentThread(this.runtime.config, request.sessionKey, request.agent);
    if (thread.sessionKey !== request.sessionKey) {
      const reply = this.enqueue({ ...request, sessionKey: thread.sessionKey }, options).then((r) => ({ ...r, sessionKey: request.sessionKey }));
      if (!thread.ephemeral) return reply;
      return reply.finally(() => this.runtime.store().deleteSession(thread.sessionKey).catch(() => undefined));
    }
    return this.enqueue(request, options);
  }

  private enqueue(request: TurnRequest, options: TurnOptions): Promise<TurnReply> {
    const traceParent = activeSpanContext();
    return new Promise<TurnReply>((resolve, reject) => {
      const item: WorkItem = {
        request,
        sessionKey: request.sessionKey,
        source: "direct",
        injectable: false,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
        ...(traceParent ? { traceParent } : {}),
        resolve,
        reject,
      };
      this.submit(item);
    });
  }

  /** Handles one inbound bus message (what `start()` does for each message it consumes). */
  accept(message: InboundMessage): void {
    let turn: InboundTurn;
    try {
      turn = inboundTurn(message, this.runtime.config);
    } catch (error) {
      this.report({ type: "inbound_failed", error, message });
      return;
    }
    const { sessionKey, route, request } = turn;
    if (this.commands.isPriority(message.content)) {
      this.runPriority(request, message.content).then(
        (reply) => this.relayFor(route).send(`${message.id}:command`, reply.error !== undefined ? `Sorry, I could not answer: ${reply.error}` : reply.content),
        (error: unknown) => this.report({ type: "inbound_failed", error, sessionKey, message }),
      );
      return;
    }
    this.submit({
      request,
      sessionKey,
      source: "bus",
      injectable: parseCommand(message.content) === undefined,
      inbound: message,
      route,
      resolve: turn.ephemeral ? () => void this.runtime.store().deleteSession(sessionKey).catch(() => undefined) : () => undefined,
      reject: () => undefined,
    });
  }

  // ── lanes ───────────────────────────────────────────────────────────────────────────────

  private submit(item: WorkItem): void {
    const lane = this.lanes.obtain(item.sessionKey);
    const outcome = this.lanes.enqueue(lane, item);
    if (outcome !== "queued") this.runtime.logger.warn("session queue full", { sessionKey: item.sessionKey, outcome });
    if (item.signal) {
      item.signal.addEventListener(
        "abort",
        () => {
          const at = lane.queue.indexOf(item);
          if (at >= 0) {
            lane.queue.splice(at, 1);
            item.resolve(abortedReply(item));
          } else if (lane.active?.item === item) lane.active.abort.abort();
        },
        { once: true },
      );
    }
    if (!lane.running) this.pump(lane);
  }

  private pump(lane: Lane): void {
    lane.running = true;
    const drain = async (): Promise<void> => {
      for (let item = lane.queue.shift(); item; item = lane.queue.shift()) await this.runItem(lane, item);
    };
    drain()
      .catch((error: unknown) => this.report({ type: "turn_failed", error, sessionKey: lane.key }))
      .finally(() => {
        lane.running = false;
        if (lane.queue.length > 0) this.pump(lane);
        else this.lanes.release(lane);
      });
  }

  private runItem(lane: Lane, item: WorkItem): Promise<void> {
    return withTurnSpan(item.request, item.traceParent ?? null, (span) => this.runItemIn(lane, item, span));
  }

  private async runItemIn(lane: Lane, item: WorkItem, span: Span | undefined): Promise<void> {
    const abort = new AbortController();
    lane.active = { item, abort };
    if (item.signal?.aborted) abort.abort();
    const relay = item.route && this.bus ? this.relayFor(item.route) : undefined;
    let begunTurnId: string | undefined;
    const takenUp = performance.now();
    const waitStarted = performance.now();
    let leave: (() => void) | undefined;
    let lease: SessionLease | undefined;
    const onLeaseLost = (): void => abort.abort(new AbortedError("lost the session lease to PostgreSQL"));
    try {
      // A store shared by several workers: this session's turns run here only while we hold its lease.
      lease = await this.runtime.store().leaseSession?.(item.sessionKey, abort.signal);
      lease?.lost.addEventListener("abort", onLeaseLost, { once: true });
      // Slash commands call no model: they never wait behind queued turns. Admission comes after
      // the lease, so turns waiting for another worker hold no admission slot here.
      leave = isCommandRequest(item.request) ? undefined : await this.admission.acquire(abort.signal);
      const admissionMs = performance.now() - waitStarted;
      const { reply, goalActiveAtStart } = await runTurnStages(
        { runtime: this.runtime, context: this.context, host: this.host, consolidationRatio: this.runtime.config.agents.defaults.consolidationRatio },
        {
          request: item.request,
          sessionKey: item.sessionKey,
          signal: abort.signal,
          onEvent: (event) => {
            relay?.onEvent(event);
            item.onEvent?.(event);
          },
          drainInjections: (limit) => this.drainInjections(lane, limit),
          onTurnBegun: (turnId) => {
            begunTurnId = turnId;
            relay?.begin(turnId);
          },
          extraTools: (profile) =>
            buildTurnTools({ profile, item, relay, bus: this.bus, subagents: this.subagents, cron: this.cron, store: this.runtime.store() }),
          ...(relay ? { withoutTools: ["message"] } : {}),
          // The slot passes on once this turn's reply is on its way, as admission does below:
          // handed over at once, the next turn's request (its body encoded and written) would
          // run ahead of this turn's save and reply, in the middle of its continuation.
          modelSlot: (signal) => this.gate.acquire(signal).then((release) => () => void setImmediate(release)),
        },
      );
      // Waiting for admission is waiting for the gate, one step earlier.
      if (reply.timings) reply.timings.queueMs += admissionMs;
      if (relay) {
        const started = performance.now();
        await relay.finish(reply);
        this.runtime.logger.debug("turn stage", { sessionKey: item.sessionKey, stage: "respond", ms: Math.round(performance.now() - started) });
      }
      // The turn is over: a /stop from now on has nothing running here to count.
      lane.active = undefined;
      recordTurnReply(span, reply);
      item.resolve(reply);
      this.observers.completed(item.request, reply, takenUp);
      // The reply stands even when queueing the next goal round fails; the lane is still held,
      // so the round is queued before any message that answers this reply.
      await this.continueGoal(item, reply, goalActiveAtStart).catch((error: unknown) => this.report({ type: "turn_failed", error, sessionKey: item.sessionKey }));
    } catch (error) {
      // Cut off from the store: the turn stays for the next lease holder to close (turn-failure.ts).
      const cut = interruptedTurnReply(item.sessionKey, error, lease?.lost.aborted === true, begunTurnId);
      if (cut) return void (recordTurnReply(span, cut), item.resolve(cut), this.observers.completed(item.request, cut, takenUp));
      // A stage threw: close what the turn left open and answer with an error reply, never a rejection.
      const stopped = isAbortError(error) || abort.signal.aborted;
      await settleThrownTurn(this.runtime, { sessionKey: item.sessionKey, request: item.request, turnId: begunTurnId, error, stopped });
      if (stopped) {
        const aborted = abortedReply(item);
        recordTurnReply(span, aborted);
        item.resolve(aborted);
        this.observers.completed(item.request, aborted, takenUp);
        return;
      }
      this.report({ type: "turn_failed", error, sessionKey: item.sessionKey, ...(item.inbound ? { message: item.inbound } : {}) });
      const reply = thrownTurnReply(item.sessionKey, error, begunTurnId ? { turnId: begunTurnId } : {});
      if (relay) await relay.send(`${item.inbound?.id ?? newId("msg")}:error`, `Sorry, I could not answer: ${reply.error}`);
      recordTurnReply(span, reply);
      item.resolve(reply);
      this.observers.completed(item.request, reply, takenUp);
    } finally {
      lane.active = undefined;
      // After this turn's reply is on its way: the next turn's restore and build would delay it.
      if (leave) setImmediate(leave);
      if (lease) {
        lease.lost.removeEventListener("abort", onLeaseLost);
        await lease.release().catch((error: unknown) => this.report({ type: "turn_failed", error, sessionKey: item.sessionKey }));
      }
    }
  }

  /** Queued chat messages and sub-agent results become user messages of the running turn. */
  private drainInjections(lane: Lane, limit: number): Message[] {
    const taken = this.lanes.takeInjectable(lane, limit);
    for (const item of taken) item.resolve({ content: "", sessionKey: item.sessionKey, stopReason: "completed", toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 } });
    if (taken.length > 0) this.runtime.logger.debug("injected queued messages", { sessionKey: lane.key, count: taken.length });
    return taken.map((item) => userMessage(item.request.content));
  }

  /** After a completed turn with an active goal, the next goal round queues as its own turn. */
  private async continueGoal(item: WorkItem, reply: TurnReply, goalActiveAtStart: boolean): Promise<void> {
    const request = await nextGoalRound(this.runtime.store(), item.sessionKey, item.request, reply, { goalActiveAtStart });
    if (!request) return;
    this.submit({
      request,
      sessionKey: item.sessionKey,
      source: "system",
      injectable: false,
      ...(item.route ? { route: item.route } : {}),
      resolve: () => undefined,
      reject: (error) => this.report({ type: "turn_failed", error, sessionKey: item.sessionKey }),
    });
  }

  /** A finished background sub-agent reports into its origin session. */
  private onSubagentResult(result: SubagentResult): void {
    const { origin } = result;
    if (result.status === "stopped") return;
    const route: ReplyRoute | undefined = origin.channel && origin.chatId && this.bus ? { channel: origin.channel, chatId: origin.chatId, stream: false } : undefined;
    this.submit({
      request: { sessionKey: origin.sessionKey, content: subagentNotice(result), channel: "system", ...(origin.agent ? { agent: origin.agent } : {}) },
      sessionKey: origin.sessionKey,
      source: "system",
      injectable: true,
      ...(route ? { route } : {}),
      resolve: () => undefined,
      reject: (error) => this.report({ type: "turn_failed", error, sessionKey: origin.sessionKey }),
    });
  }

  private async runPriority(request: TurnRequest, text: string): Promise<TurnReply> {
    const parsed = parseCommand(text);
    if (!parsed) throw new AbortedError("not a command");
    try {
      const content = await this.commands.run(parsed, { sessionKey: request.sessionKey, request, host: this.host });
      return { content, sessionKey: request.sessionKey, stopReason: "completed", toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 }, command: parsed.name };
    } catch (error) {
      this.report({ type: "turn_failed", error, sessionKey: request.sessionKey });
      return thrownTurnReply(request.sessionKey, error, { command: parsed.name });
    }
  }

  private relayFor(route: ReplyRoute): OutboundRelay {
    if (!this.bus) throw new Error("no bus to reply on");
    const defaults = this.runtime.config.agents.defaults;
    return new OutboundRelay(this.bus, route, (error, message) => this.report({ type: "delivery_failed", error, message }), {
      ...(defaults.toolHintMaxLength !== undefined ? { toolHintMaxLength: defaults.toolHintMaxLength } : {}),
    });
  }

  private report(error: AgentLoopError): void {
    this.runtime.logger.error(`agent loop: ${error.type}`, { sessionKey: error.sessionKey, error: errorMessage(error.error) });
    for (const handler of this.errorHandlers) {
      try {
        handler(error);
      } catch {
        // A failing error handler has nowhere left to report to.
      }
    }
  }
}
