/**
 * Category 6 — load and soak. A real gateway (`startRuntimeGateway`, port 0, in this process so
 * its memory can be measured) over the fake LLM (a 2 ms delay per answer). 200 sessions talk
 * at once, each sending 20 turns one after the other with plain `fetch`. Afterwards every
 * session's stored history must be exactly its 20 questions in order, each followed by one
 * answer (nothing lost, nothing doubled, nothing reordered), every question must have reached
 * the model exactly once, and RSS after the run (after `gc()`) must stay ≤ 1.3× RSS after a
 * warm-up at the same concurrency. Run with `--expose-gc` (see vitest.reliability.config.ts).
 */
import { afterAll, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { textOf } from "../../src/core/message-helpers.js";
import { apiSessionKey } from "../../src/session/keys.js";
import { startRuntimeGateway } from "../../src/gateway/runtime-gateway.js";
import type { RunningGateway } from "../../src/gateway/runtime-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startRuntime, wireMessages, wireText } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

const SESSIONS = Number(process.env.NANOBOT_LOAD_SESSIONS ?? 200);
const TURNS = Number(process.env.NANOBOT_LOAD_TURNS ?? 20);
const WARMUP_TURNS = 2;
const KEY = "gw-test-SECRET-load-0001";
const figures = { turns: 0, lost: 0, duplicated: 0, reordered: 0, failed: 0, rssWarmMb: 0, rssEndMb: 0, heapWarmMb: 0, heapEndMb: 0, seconds: 0 };

afterAll(() => {
  console.log(
    `load and soak: ${SESSIONS} sessions × ${TURNS} turns = ${figures.turns} turns in ${figures.seconds.toFixed(1)} s, ${figures.failed} failed, ` +
      `${figures.lost} lost, ${figures.duplicated} duplicated, ${figures.reordered} out of order; RSS ${figures.rssWarmMb} MB after warm-up → ${figures.rssEndMb} MB after ` +
      `(×${(figures.rssEndMb / Math.max(1, figures.rssWarmMb)).toFixed(2)}), heap ${figures.heapWarmMb} → ${figures.heapEndMb} MB, gc() ${gc ? "available" : "missing"}`,
  );
});

const gc = (globalThis as { gc?: () => void }).gc;

async function settle(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const m = process.memoryUsage();
  return { rss: Math.round(m.rss / 1024 / 1024), heap: Math.round(m.heapUsed / 1024 / 1024) };
}

const question = (s: number, t: number) => `session ${s} question ${t}`;

describe("load and soak through the gateway", () => {
  it(`${SESSIONS} concurrent sessions × ${TURNS} turns: nothing lost, doubled or reordered; memory back near baseline`, async () => {
    const fake: FakeLLM = await startFakeLLM();
    const fx: RuntimeFixture = await startRuntime(fake, { extra: { gateway: { host: "127.0.0.1", apiKey: KEY } } });
    let gateway: RunningGateway | undefined;
    let loop: AgentLoop | undefined;
    /** How often each question reached the model (the fake's log is drained as it grows). */
    const sent = new Map<string, number>();
    const drain = () => {
      for (const r of fake.requests.splice(0)) {
        const last = wireMessages(r).at(-1);
        if (last) sent.set(wireText(last), (sent.get(wireText(last)) ?? 0) + 1);
      }
    };
    try {
      // The AgentLoop (per-session lanes, a global limit on turns at once) as in production.
      loop = new AgentLoop({ runtime: fx.runtime, createWorkspace: false });
      gateway = await startRuntimeGateway(fx.runtime, { port: 0, processor: loop });
      const url = `${gateway.server.url}/v1/chat/completions`;
      const ask = async (s: number, t: number): Promise<void> => {
        fake.enqueue({ text: `answer ${t}`, delayMs: 2 });
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "nanobot", session_id: `load-${s}`, messages: [{ role: "user", content: question(s, t) }] }),
        });
        const body = (await res.json()) as { choices?: Array<{ message: { content: string } }> };
        if (res.status !== 200 || typeof body.choices?.[0]?.message.content !== "string") figures.failed++;
        figures.turns++;
        if (fake.requests.length > 200) drain();
      };
      const runTurns = (from: number, to: number) =>
        Promise.all(
          Array.from({ length: SESSIONS }, async (_, s) => {
            for (let t = from; t < to; t++) await ask(s, t);
          }),
        );

      await runTurns(0, WARMUP_TURNS);
      drain();
      const warm = await settle();
      const started = Date.now();
      await runTurns(WARMUP_TURNS, TURNS);
      figures.seconds = (Date.now() - started) / 1000;
      drain();
      const end = await settle();
      Object.assign(figures, { rssWarmMb: warm.rss, rssEndMb: end.rss, heapWarmMb: warm.heap, heapEndMb: end.heap });

      const store = fx.runtime.store();
      for (let s = 0; s < SESSIONS; s++) {
        const history = await store.loadMessages(apiSessionKey(`load-${s}`));
        const users = history.filter((m) => m.role === "user").map((m) => textOf(m));
        const expected = Array.from({ length: TURNS }, (_, t) => question(s, t));
        figures.lost += expected.filter((q) => !users.includes(q)).length;
        figures.duplicated += users.length - new Set(users).size;
        if (users.join("|") !== expected.join("|")) figures.reordered += users.filter((u, i) => u !== expected[i]).length;
        // Strict alternation: question, answer, question, answer …
        const roles = history.map((m) => m.role).join(",");
        expect(roles, `load-${s}`).toBe(Array.from({ length: TURNS }, () => "user,assistant").join(","));
      }
      for (let s = 0; s < SESSIONS; s++) {
        for (let t = 0; t < TURNS; t++) {
          const n = sent.get(question(s, t)) ?? 0;
          if (n === 0) figures.lost++;
          if (n > 1) figures.duplicated += n - 1;
        }
      }
      expect({ failed: figures.failed, lost: figures.lost, duplicated: figures.duplicated, reordered: figures.reordered }).toEqual({
        failed: 0,
        lost: 0,
        duplicated: 0,
        reordered: 0,
      });
      expect(figures.turns).toBe(SESSIONS * TURNS);
      expect(end.rss, `RSS ${warm.rss} MB after warm-up, ${end.rss} MB after the run`).toBeLessThanOrEqual(warm.rss * 1.3);
      fake.assertDone();
    } finally {
      await loop?.stop();
      await gateway?.close();
      await fx.close().catch(() => undefined);
      await fake.close();
    }
  }, 600_000);
});
