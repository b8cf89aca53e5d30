/**
 * Issue #24 part 2: several `nanobot gateway` processes (the built CLI) on one PostgreSQL.
 * Each worker has its own scripted fake LLM, so every model request names the worker that made
 * it; they share the home (cron jobs, workspace) and the store (a throwaway schema).
 * A session's turns never overlap across workers and keep their order; a worker SIGKILLed
 * mid-turn leaves a turn another worker closes and resumes for the retried Idempotency-Key,
 * answering the kept message once; cron runs on one worker only and moves on when it dies.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { PgSessionStore, historyProblems } from "../../src/session/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, RecordedRequest } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();

interface Worker {
  name: string;
  fake: FakeLLM;
  proc: RunningNanobot;
  url: string;
}

let root: string;
let schema: string;
let env: Record<string, string>;
let workers: Worker[] = [];
let store: PgSessionStore | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cluster-"));
  await mkdir(join(root, "ws"));
  schema = uniqueSchema("cluster");
  env = { HOME: root, NANOBOT_HOME: join(root, "home"), NANOBOT_STORE_URL: `${TEST_PG_URL}?schema=${schema}` };
});
afterEach(async () => {
  for (const w of workers) {
    await w.proc.stop();
    await w.fake.close();
  }
  workers = [];
  await store?.close();
  store = undefined;
  await dropSchemas([schema]);
  await rm(root, { recursive: true, force: true });
});

/** Starts a gateway worker with its own config (its own fake LLM) on the shared home and store. */
async function startWorker(name: string): Promise<Worker> {
  const fake = await startFakeLLM();
  const config = join(root, `${name}.json`);
  await writeFile(
    config,
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-cluster-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws"), dream: { enabled: false } } },
      gateway: { heartbeat: { enabled: false } },
    }),
  );
  const proc = startNanobot(["gateway", "--port", "0"], { cwd: root, env: { ...env, NANOBOT_CONFIG: config } });
  const worker: Worker = { name, fake, proc, url: "" };
  workers.push(worker);
  worker.url = (await proc.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!;
  return worker;
}

function ask(worker: Worker, content: string, session: string, key?: string): Promise<Response> {
  return fetch(`${worker.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content }], session_id: session }),
  });
}

async function answer(response: Promise<Response>): Promise<string> {
  const res = await response;
  const body = (await res.json()) as { choices?: Array<{ message: { content: string } }>; error?: unknown };
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body.choices![0]!.message.content;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; stderr:\n${workers.map((w) => `[${w.name}] ${w.proc.stderr()}`).join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Workers queued on the server for the lease of `sessionKey`. */
async function leaseWaiters(sessionKey: string): Promise<number> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
         AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
      [`nanobot:lease:${schema}:${sessionKey}`],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

function testStore(): PgSessionStore {
  store ??= new PgSessionStore({ url: TEST_PG_URL, schema });
  return store;
}

/** The conversation a model request carried (user and assistant texts, system prompt left out). */
function conversation(request: RecordedRequest): string[] {
  const messages = (request.body as { messages?: Array<{ role: string; content?: unknown }> }).messages ?? [];
  return messages.filter((m) => m.role === "user" || m.role === "assistant").map((m) => `${m.role}:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
}

/** How many model requests a cron job's firings caused on `fake`. */
function firings(fake: FakeLLM, name: string): number {
  return fake.requests.filter((r) => JSON.stringify(conversation(r).at(-1) ?? "").includes(`[Scheduled task \\"${name}\\"]`)).length;
}

postgres.describe("gateway workers on one PostgreSQL", () => {
  describe("a session's turns across workers", () => {
    it("three workers, one session: the turns run one at a time, in the order they arrived", { timeout: 240_000 }, async () => {
      const [a, b, c] = [await startWorker("a"), await startWorker("b"), await startWorker("c")];
      // The first answer takes a while, so the other two requests arrive while it runs.
      a.fake.enqueue({ text: "one", delayMs: 3_000 });
      b.fake.enqueue({ text: "two" });
      c.fake.enqueue({ text: "three" });
      const first = answer(ask(a, "q1", "shared"));
      await until(() => a.fake.requests.length === 1, "a's model call");
      const second = answer(ask(b, "q2", "shared"));
      await until(async () => (await leaseWaiters("api:shared")) >= 1 || b.fake.requests.length > 0, "b to wait for the lease");
      const third = answer(ask(c, "q3", "shared"));
      await until(async () => (await leaseWaiters("api:shared")) >= 2 || c.fake.requests.length > 0, "c to wait for the lease");
      expect(await Promise.all([first, second, third])).toEqual(["one", "two", "three"]);

      // Each turn saw every turn before it, complete: none overlapped another.
      expect(conversation(a.fake.requests[0]!)).toEqual(["user:q1"]);
      expect(conversation(b.fake.requests[0]!)).toEqual(["user:q1", "assistant:one", "user:q2"]);
      expect(conversation(c.fake.requests[0]!)).toEqual(["user:q1", "assistant:one", "user:q2", "assistant:two", "user:q3"]);
      const history = await testStore().loadMessages("api:shared");
      expect(history.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(["user:q1", "assistant:one", "user:q2", "assistant:two", "user:q3", "assistant:three"]);
      expect(historyProblems(history)).toEqual([]);
    });
  });

  describe("a worker killed mid-turn", () => {
    it("another worker closes the dangling turn; the retried key resumes it: the message kept, answered once", { timeout: 240_000 }, async () => {
      const [a, b] = [await startWorker("a"), await startWorker("b")];
      a.fake.enqueue({ text: "never sent", delayMs: 120_000 });
      const lost = ask(a, "book the flight", "crash", "flight-1").catch((error: unknown) => error);
      await until(() => a.fake.requests.length === 1, "a's model call");
      a.proc.child.kill("SIGKILL");
      expect(await lost).toBeInstanceOf(Error);

      // The retry reaches the other worker: it closes the dead turn and resumes it — the kept
      // message is answered, not stored again.
      b.fake.enqueue({ text: "Booked." }, { text: "Yes, booked." });
      const retried = await ask(b, "book the flight", "crash", "flight-1");
      expect(retried.status).toBe(200);
      expect(((await retried.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("Booked.");
      expect(conversation(b.fake.requests[0]!)).toEqual(["user:book the flight"]);
      // Asked again, the key answers the same without another model call.
      expect(await answer(ask(b, "book the flight", "crash", "flight-1"))).toBe("Booked.");
      expect(await answer(ask(b, "is it done?", "crash"))).toBe("Yes, booked.");
      expect(b.fake.requests).toHaveLength(2);

      const history = await testStore().loadMessages("api:crash");
      expect(history.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(["user:book the flight", "assistant:Booked.", "user:is it done?", "assistant:Yes, booked."]);
      expect(historyProblems(history)).toEqual([]);
    });
  });

  describe("a worker killed before its turn began", () => {
    it("the retried key stores the message once and answers it, though the first attempt never stored it", { timeout: 240_000 }, async () => {
      const [a, b] = [await startWorker("a"), await startWorker("b")];
      // b holds the session's lease with a slow turn; a's keyed request waits for it, its key already recorded.
      b.fake.enqueue({ text: "first done", delayMs: 4_000 });
      const first = answer(ask(b, "first", "early", "early-1"));
      await until(() => b.fake.requests.length === 1, "b's model call");
      const lost = ask(a, "second", "early", "early-2").catch((error: unknown) => error);
      await until(async () => (await leaseWaiters("api:early")) >= 1, "a to wait for the lease");
      a.proc.child.kill("SIGKILL");
      expect(await lost).toBeInstanceOf(Error);
      expect(await first).toBe("first done");

      b.fake.enqueue({ text: "second done" });
      expect(await answer(ask(b, "second", "early", "early-2"))).toBe("second done");
      expect(conversation(b.fake.requests[1]!)).toEqual(["user:first", "assistant:first done", "user:second"]);
      const history = await testStore().loadMessages("api:early");
      expect(history.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(["user:first", "assistant:first done", "user:second", "assistant:second done"]);
      expect(historyProblems(history)).toEqual([]);
      expect(a.fake.requests).toHaveLength(0);
    });
  });

  describe("Idempotency-Key across workers", () => {
    it("a repeat sent to another worker while the first runs waits for it and gets its answer", { timeout: 240_000 }, async () => {
      const [a, b] = [await startWorker("a"), await startWorker("b")];
      a.fake.enqueue({ text: "Paris.", delayMs: 3_000 });
      const first = answer(ask(a, "capital of France?", "idem", "paris-1"));
      await until(() => a.fake.requests.length === 1, "a's model call");
      const repeat = answer(ask(b, "capital of France?", "idem", "paris-1"));
      expect(await Promise.all([first, repeat])).toEqual(["Paris.", "Paris."]);
      expect(b.fake.requests).toHaveLength(0);
      const history = await testStore().loadMessages("api:idem");
      expect(history.map((m) => `${m.role}:${textOf(m.content)}`)).toEqual(["user:capital of France?", "assistant:Paris."]);
    });
  });

  describe("cron on the cluster's leader", () => {
    it("a job fires on one worker only, and on another once that worker dies", { timeout: 240_000 }, async () => {
      const [a, b, c] = [await startWorker("a"), await startWorker("b"), await startWorker("c")];
      for (const w of [a, b, c]) w.fake.enqueue(...Array.from({ length: 200 }, () => ({ text: "done" })));
      const added = await runNanobot(["cron", "add", "-n", "alpha", "-m", "say alpha", "--every", "1", "-s", "cron:alpha"], {
        cwd: root,
        env: { ...env, NANOBOT_CONFIG: join(root, "a.json") },
      });
      expect(added.code).toBe(0);
      const total = (): number => firings(a.fake, "alpha") + firings(b.fake, "alpha") + firings(c.fake, "alpha");
      await until(() => total() >= 3, "alpha to fire three times");
      // The first worker started first and leads: only it fires.
      expect([firings(b.fake, "alpha"), firings(c.fake, "alpha")]).toEqual([0, 0]);

      a.proc.child.kill("SIGKILL");
      await until(() => firings(b.fake, "alpha") + firings(c.fake, "alpha") >= 3, "alpha to fire on another worker");
      // Exactly one of the survivors took over.
      expect(firings(b.fake, "alpha") === 0 || firings(c.fake, "alpha") === 0).toBe(true);
    });
  });
});
