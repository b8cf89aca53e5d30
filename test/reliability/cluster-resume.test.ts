/**
 * Resuming an interrupted turn through the gateway, across workers that die one after another:
 * four `nanobot gateway` workers (the built CLI) on one PostgreSQL schema, the echo LLM slow
 * enough that a SIGKILL lands while a turn waits on the model.
 *
 * - A request whose worker dies is sent again with the same Idempotency-Key to the next worker,
 *   which resumes the turn — and dies too. The third worker resumes it again and answers: the
 *   message is stored once and answered once (a reopened turn cut off in its turn is reopened
 *   again, not refused as if the conversation had gone on).
 * - Once the session went on after an interrupted turn (another message was answered), the
 *   retry of the interrupted request is a 409 `turn_not_resumable` saying why, not a 500.
 */
import { afterEach, expect } from "vitest";
import { Cluster, question, sessionId } from "./cluster/harness.js";
import type { ClusterWorker } from "./cluster/harness.js";
import { answerFor } from "./cluster/echo-llm.js";
import { checkStore } from "./cluster/store-check.js";
import { needsPostgres } from "../support/postgres.js";

const postgres = await needsPostgres();

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

interface Reply {
  status: number;
  body: { choices?: Array<{ message?: { content?: string } }>; error?: { message?: string; code?: string } };
}

function send(worker: ClusterWorker, session: string, key: string, content: string): Promise<Reply> {
  return fetch(`${worker.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content }], session_id: session }),
    signal: AbortSignal.timeout(60_000),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Reply["body"] }));
}

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

postgres.it("a resumed turn whose worker dies too is resumed again and answered once; a retry after the session went on is a 409", async () => {
  cluster = await Cluster.start({ workers: 4, maxLeaseConnections: 4, llmDelayMs: 2_000 });
  const c = cluster;
  const [a, b, w3, w4] = c.workers as [ClusterWorker, ClusterWorker, ClusterWorker, ClusterWorker];

  /** Sends the request to worker `i` and SIGKILLs it once the model has the turn's request. */
  const sendAndKill = async (i: number, session: string, key: string, content: string): Promise<void> => {
    const asked = c.llm.requests();
    const attempt = send(c.workers[i]!, session, key, content).then(
      (reply) => reply,
      (error: unknown) => error as Error,
    );
    await until(() => c.llm.requests() > asked, `the model request of worker ${c.workers[i]!.name}`);
    c.kill(i);
    // Its client saw the connection drop, not an answer.
    expect(await attempt).toBeInstanceOf(Error);
  };

  // Twice cut off, then answered by the third worker.
  const content = question("resume", 0, 0);
  const session = sessionId("resume", 0);
  await sendAndKill(0, session, "resume-s0-t0", content);
  await sendAndKill(1, session, "resume-s0-t0", content);
  const third = await send(w3, session, "resume-s0-t0", content);
  expect(third.status, JSON.stringify(third.body) + c.stderr()).toBe(200);
  expect(third.body.choices?.[0]?.message?.content).toBe(answerFor(content));
  const stored = await checkStore(c.schema, "resume", 1, 1);
  expect(stored.problems).toEqual([]);
  expect(stored).toMatchObject({ lost: 0, duplicated: 0, unanswered: 0, answeredTwice: 0, openTurns: 0 });
  // Asked again, the same key replays that answer.
  const again = await send(w4, session, "resume-s0-t0", content);
  expect([again.status, again.body.choices?.[0]?.message?.content]).toEqual([200, answerFor(content)]);

  // Cut off, then the session goes on with another message: the retry cannot be resumed.
  const first = "what is the weather?";
  await sendAndKill(2, "went-on", "went-on-1", first);
  const next = await send(w4, "went-on", "went-on-2", "never mind, what time is it?");
  expect([next.status, next.body.choices?.[0]?.message?.content]).toEqual([200, answerFor("never mind, what time is it?")]);
  const retry = await send(w4, "went-on", "went-on-1", first);
  expect(retry.status, JSON.stringify(retry.body)).toBe(409);
  expect(retry.body.error?.code).toBe("turn_not_resumable");
  expect(retry.body.error?.message).toMatch(/went on after the interrupted turn.*send a new Idempotency-Key/);
  expect([a, b, w3].map((w) => w.dead)).toEqual([true, true, true]);
}, 300_000);
