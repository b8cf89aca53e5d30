/**
 * N `nanobot gateway` workers (the built CLI, real processes) on one PostgreSQL schema, the
 * echo LLM, and clients that behave like real ones: each holds one session and sends its turns
 * one after another, each with an Idempotency-Key; a request that failed (its worker died, the
 * store was cut off) is sent again with the same key, to another live worker. Used by the
 * fail-over and network-cut reliability tests and by `npm run bench -- --only=cluster-failover`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNanobot } from "../../support/nanobot-cli.js";
import type { RunningNanobot } from "../../support/nanobot-cli.js";
import { TEST_PG_URL, dropSchema, uniqueSchema } from "./pg.js";
import { answerFor, startEchoLLM } from "./echo-llm.js";
import type { EchoLLM } from "./echo-llm.js";

export interface ClusterWorker {
  name: string;
  proc: RunningNanobot;
  url: string;
  dead: boolean;
}

export interface ClusterOptions {
  workers: number;
  /** `store.maxLeaseConnections` of every worker. */
  maxLeaseConnections: number;
  /** The model's latency per request. */
  llmDelayMs: number;
  /** The store URL the workers use (default the test database), `?schema=` is added. */
  storeBaseUrl?: string;
  /** Extra environment of worker `i` (OTEL_* for the one that exports traces). */
  envOf?: (i: number) => Record<string, string>;
  /** The workers' leader retry / lease heartbeat are their defaults; `--logs` when set. */
  logs?: boolean;
}

export class Cluster {
  readonly workers: ClusterWorker[] = [];
  private constructor(
    readonly root: string,
    readonly schema: string,
    readonly llm: EchoLLM,
    private readonly options: ClusterOptions,
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    const root = await mkdtemp(join(tmpdir(), "nanobot-failover-"));
    await mkdir(join(root, "ws"));
    await writeFile(join(root, "ws", "note.txt"), "The note says: failover works.\n");
    const cluster = new Cluster(root, uniqueSchema("failover"), await startEchoLLM({ delayMs: options.llmDelayMs }), options);
    try {
      for (let i = 0; i < options.workers; i++) await cluster.startWorker(i);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  private async startWorker(i: number): Promise<ClusterWorker> {
    const name = String.fromCharCode(97 + i);
    const config = join(this.root, `${name}.json`);
    await writeFile(
      config,
      JSON.stringify({
        providers: { custom: { apiBase: this.llm.baseURL, apiKey: "sk-fake-failover-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace: join(this.root, "ws"), dream: { enabled: false } } },
        gateway: { heartbeat: { enabled: false } },
        store: { maxLeaseConnections: this.options.maxLeaseConnections },
      }),
    );
    const env = {
      HOME: this.root,
      NANOBOT_HOME: join(this.root, "home"),
      NANOBOT_CONFIG: config,
      NANOBOT_STORE_URL: `${this.options.storeBaseUrl ?? TEST_PG_URL}?schema=${this.schema}`,
      ...this.options.envOf?.(i),
    };
    const proc = startNanobot(["gateway", "--port", "0", ...(this.options.logs ? ["--logs"] : [])], { cwd: this.root, env });
    const worker: ClusterWorker = { name, proc, url: "", dead: false };
    this.workers.push(worker);
    worker.url = (await proc.waitFor(/listening on (http:\/\/\S+)/, 90_000))[1]!;
    return worker;
  }

  /** Workers not killed and still running (one that crashed counts as dead). */
  alive(): ClusterWorker[] {
    for (const w of this.workers) if (w.proc.child.exitCode !== null || w.proc.child.signalCode !== null) w.dead = true;
    return this.workers.filter((w) => !w.dead);
  }

  /** SIGKILL: no shutdown, no clean-up; its connections die with it. */
  kill(i: number): void {
    const worker = this.workers[i]!;
    worker.dead = true;
    worker.proc.child.kill("SIGKILL");
  }

  stderr(): string {
    return this.workers.map((w) => `[${w.name}] ${w.proc.stderr().slice(-4000)}`).join("\n");
  }

  async stop(): Promise<void> {
    for (const w of this.workers) await w.proc.stop();
    await this.llm.close();
    await dropSchema(this.schema);
    await rm(this.root, { recursive: true, force: true });
  }
}

export const question = (prefix: string, s: number, t: number): string => `${prefix} session ${s} question ${t}`;
export const sessionId = (prefix: string, s: number): string => `${prefix}-s${s}`;

export interface ClientFigures {
  /** Turns answered with their own answer. */
  answered: number;
  /** Turns that needed more than one request. */
  retried: number;
  /** Requests that failed and were sent again. */
  failedAttempts: number;
  /** Turns never answered, with the last error. */
  unanswered: string[];
  /** Failed attempts by reason (status and the start of the error message), for the report. */
  reasons: Record<string, number>;
  wallMs: number;
  latenciesMs: number[];
}

export interface LoadOptions {
  prefix: string;
  sessions: number;
  turns: number;
  /** Called after each answered turn with the total so far (a test kills or cuts from here). */
  onAnswered?: (answered: number) => void;
  /** Attempts per turn before the client gives up on it (default 30). */
  maxAttempts?: number;
}

/** S clients, each one session of T turns in order; failed requests go again with the same key. */
export async function runClients(cluster: Cluster, options: LoadOptions): Promise<ClientFigures> {
  const figures: ClientFigures = { answered: 0, retried: 0, failedAttempts: 0, unanswered: [], reasons: {}, wallMs: 0, latenciesMs: [] };
  const started = performance.now();
  const maxAttempts = options.maxAttempts ?? 30;
  const oneTurn = async (s: number, t: number): Promise<void> => {
    const content = question(options.prefix, s, t);
    const key = `${options.prefix}-s${s}-t${t}`;
    const begun = performance.now();
    let last = "";
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const alive = cluster.alive();
      if (alive.length === 0) {
        last = "no worker left running";
        break;
      }
      const worker = alive[(s + attempt) % alive.length]!;
      try {
        const res = await fetch(`${worker.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content }], session_id: sessionId(options.prefix, s) }),
          signal: AbortSignal.timeout(180_000),
        });
        const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
        const answer = body.choices?.[0]?.message?.content;
        if (res.ok && answer === answerFor(content)) {
          figures.answered++;
          if (attempt > 0) figures.retried++;
          figures.latenciesMs.push(performance.now() - begun);
          options.onAnswered?.(figures.answered);
          return;
        }
        last = `HTTP ${res.status} from ${worker.name}: ${JSON.stringify(body).slice(0, 300)}`;
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        last = `${worker.name}: ${(error as Error).message}${cause ? ` (${cause.code ?? cause.message ?? ""})` : ""}`;
      }
      figures.failedAttempts++;
      const reason = last.replace(/ from [a-z]:|^[a-z]: /, "").replace(/^HTTP (\d+) .*"message":"(?:The turn failed inside nanobot, not at the model provider: )?([^"]{0,90}).*$/, "HTTP $1 $2");
      figures.reasons[reason] = (figures.reasons[reason] ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
    figures.unanswered.push(`${key}: ${last}`);
  };
  await Promise.all(
    Array.from({ length: options.sessions }, async (_, s) => {
      for (let t = 0; t < options.turns; t++) await oneTurn(s, t);
    }),
  );
  figures.wallMs = performance.now() - started;
  return figures;
}
