/**
 * Category 2 — crash consistency. Each iteration hands one AgentLoop turn to a fresh child
 * process (`fixtures/crash-child.ts`, bundled once with esbuild, modules pre-loaded) and
 * SIGKILLs it at a random moment: while the LLM call is in flight, while a tool runs, or at a
 * random instant of a fast turn (which lands in the checkpoint and completion saves). Then, in
 * this process, a fresh Runtime and store open the same `state.db` and run the next turn of the
 * same session through a second fake LLM. Every time: `PRAGMA integrity_check` is ok, no
 * committed user message is lost, the request the next turn sends has no orphan tool result
 * (nor call without result), and no message is duplicated. The kill schedule is seeded
 * (`NANOBOT_CRASH_SEED`) and the seed is printed for replay.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { resolveConfig } from "../../src/config/index.js";
import { textOf } from "../../src/core/message-helpers.js";
import { longConversation } from "../support/conversations.js";
import { stateDbPath } from "../../src/config/paths.js";
import { historyProblems } from "../../src/session/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, FakeStep } from "../fakes/fake-llm-types.js";
import { ScriptChild, bundleScript, delay, seededRandom } from "./child-process.js";
import { wireMessages, wireProblems, wireText } from "./helpers.js";

const CHILD = fileURLToPath(new URL("./fixtures/crash-child.ts", import.meta.url));
const TARGET_KILLS = Number(process.env.NANOBOT_CRASH_KILLS ?? 100);
const MAX_ITERATIONS = 160;
/** Enough sessions that none passes `maxMessages` (120): every turn replays its session whole. */
const SESSIONS = Array.from({ length: 10 }, (_, i) => `crash:${i}`);
type Plan = "llm" | "tool" | "save";

const seed = Number(process.env.NANOBOT_CRASH_SEED ?? Date.now() % 1_000_000);
const random = seededRandom(seed);
const figures = { iterations: 0, kills: 0, completedBeforeKill: 0, lost: 0, corrupt: 0, orphans: 0, duplicates: 0, byPlan: { llm: 0, tool: 0, save: 0 } };
const problems: string[] = [];

afterAll(() => {
  console.log(
    `crash consistency: ${figures.kills} kills (llm ${figures.byPlan.llm}, tool ${figures.byPlan.tool}, save ${figures.byPlan.save}), ` +
      `${figures.completedBeforeKill} finished first, ${figures.lost} lost, ${figures.corrupt} corrupt, ${figures.orphans} orphan, ${figures.duplicates} duplicated (seed ${seed})`,
  );
});

function stepsFor(plan: Plan): FakeStep[] {
  if (plan === "llm") return [{ text: "a slow answer", delayMs: 3_000 }];
  if (plan === "tool") return [{ toolCalls: [{ name: "exec", arguments: { command: "sleep 3" } }] }, { text: "after the tool" }];
  return [{ toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] }, { text: "the notes say kiwi" }];
}

/** Kills `child` at the plan's moment; true when the kill landed before the turn finished. */
async function killAt(child: ScriptChild, plan: Plan): Promise<boolean> {
  const jitter = Math.floor(random() * 120);
  if (plan === "llm") await child.waitLine("BEGUN");
  else if (plan === "tool") await child.waitLine("TOOL");
  // "save": a quarter of the kills land while the turn is being begun (store open, user
  // message insert); the rest in the ~100 ms after it, across checkpoint and completion saves.
  else if (random() >= 0.25) await child.waitLine("BEGUN");
  await delay(plan === "save" ? Math.floor(random() * 350) : jitter);
  if (child.has("DONE") || !child.running) return false;
  child.kill();
  const exit = await child.exited;
  return exit.signal === "SIGKILL";
}

function integrity(dbPath: string): string {
  const db = new Database(dbPath);
  try {
    const rows = db.pragma("integrity_check") as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).join("; ");
  } finally {
    db.close();
  }
}

describe("crash consistency", () => {
  it(`survives ${TARGET_KILLS} SIGKILLs at random moments without losing, corrupting or duplicating`, async () => {
    const root = await mkdtemp(join(tmpdir(), "nanobot-crash-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, "notes.txt"), "kiwi\n");
    const verifyFake = await startFakeLLM();
    const env = { HOME: root, NANOBOT_HOME: home, NANOBOT_RETRY_SCALE: "0" };
    const { config } = resolveConfig(
      {
        providers: { custom: { apiBase: verifyFake.openaiBaseURL, apiKey: "sk-test-SECRET-verify-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
      },
      { env, cwd: root, envProviders: false },
    );
    /** User texts whose turn was committed (the child reached its first LLM request), per session. */
    const committed = new Map<string, string[]>(SESSIONS.map((s) => [s, []]));
    const sent = new Set<string>();
    const bundle = await bundleScript(CHILD);
    let next = new ScriptChild(bundle.file);
    try {
      for (let i = 0; figures.kills < TARGET_KILLS && i < MAX_ITERATIONS; i++) {
        figures.iterations++;
        const child = next;
        next = new ScriptChild(bundle.file);
        expect(await child.waitLine("READY"), child.stderr).toBe("READY");
        const plan: Plan = (["llm", "tool", "save"] as const)[i % 3] as Plan;
        const sessionKey = SESSIONS[i % SESSIONS.length] as string;
        const text = `crash-turn-${i}`;
        const childFake: FakeLLM = await startFakeLLM({ steps: stepsFor(plan) });
        sent.add(text);
        child.send(JSON.stringify({ home, workspace, baseURL: childFake.openaiBaseURL, sessionKey, text }));
        const killed = await killAt(child, plan);
        await child.exited;
        await childFake.close();
        if (killed) {
          figures.kills++;
          figures.byPlan[plan]++;
        } else {
          figures.completedBeforeKill++;
          expect(child.has("DONE"), `child ${i} died on its own: ${child.stderr}`).toBe(true);
        }
        if (child.has("BEGUN")) committed.get(sessionKey)?.push(text);

        const check = integrity(stateDbPath(home));
        if (check !== "ok") {
          figures.corrupt++;
          problems.push(`#${i} integrity: ${check}`);
        }

        // The next turn, as a restarted process would run it: fresh runtime, fresh store.
        const runtime = new Runtime({ config, home, env });
        try {
          verifyFake.enqueue({ text: `verified ${i}` });
          const before = verifyFake.requests.length;
          const reply = await new AgentLoop({ runtime, createWorkspace: false }).process({ sessionKey, content: `verify-${i}` });
          expect(reply.stopReason, reply.error).toBe("completed");
          const request = wireMessages(verifyFake.requests[before]);
          const wire = wireProblems(request);
          if (wire.length > 0) {
            figures.orphans++;
            problems.push(`#${i} ${plan} request: ${wire.join(" | ")}`);
          }
          const userTexts = request.filter((m) => m.role === "user").map(wireText);
          const stored = await runtime.store().loadMessages(sessionKey);
          const storedUsers = stored.filter((m) => m.role === "user").map((m) => textOf(m));
          const missing = (committed.get(sessionKey) ?? []).filter((t) => !userTexts.includes(t) || !storedUsers.includes(t));
          const phantom = storedUsers.filter((t) => t.startsWith("crash-turn-") && !sent.has(t));
          if (missing.length > 0 || phantom.length > 0) {
            figures.lost++;
            problems.push(`#${i} ${plan} lost ${missing.join(",")} phantom ${phantom.join(",")}`);
          }
          const ids = stored.map((m) => m.id);
          const dupTexts = storedUsers.filter((t, k) => storedUsers.indexOf(t) !== k);
          const dupSent = userTexts.filter((t, k) => userTexts.indexOf(t) !== k);
          if (new Set(ids).size !== ids.length || dupTexts.length > 0 || dupSent.length > 0) {
            figures.duplicates++;
            problems.push(`#${i} ${plan} duplicates: ${[...dupTexts, ...dupSent].join(",")}`);
          }
          const shape = historyProblems(stored);
          if (shape.length > 0) {
            figures.orphans++;
            problems.push(`#${i} ${plan} stored history: ${shape.join(" | ")}`);
          }
        } finally {
          await runtime.close();
        }
      }
    } finally {
      next.kill();
      await next.exited;
      await verifyFake.close();
      await bundle.cleanup();
      await rm(root, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
    expect(figures.kills).toBeGreaterThanOrEqual(TARGET_KILLS);
  }, 600_000);

  it("a consolidating turn in a workspace without memory/ completes (was ENOENT from history.jsonl)", async () => {
    const root = await mkdtemp(join(tmpdir(), "nanobot-consolidate-"));
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    const llm = await startFakeLLM();
    const env = { HOME: root, NANOBOT_HOME: join(root, "home"), NANOBOT_RETRY_SCALE: "0" };
    const { config } = resolveConfig(
      {
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-test-SECRET-consolidate-1" } },
        agents: { defaults: { model: "custom/test-model", workspace, contextWindowTokens: 20_000, maxTokens: 1_000 } },
      },
      { env, cwd: root, envProviders: false },
    );
    const runtime = new Runtime({ config, home: join(root, "home"), env });
    try {
      const loop = new AgentLoop({ runtime, createWorkspace: false });
      // 20 messages of ~600 words: over the 11,400-token history budget of a 20k window, so the
      // next turn consolidates first (two rounds, as in test/memory/consolidation.test.ts).
      await runtime.store().appendMessages("crash:consolidate", longConversation());
      llm.enqueue({ text: "summary of the first questions" }, { text: "summary of the next ones" }, { text: "answer 3" });
      const reply = await loop.process({ sessionKey: "crash:consolidate", content: "question 3" });
      expect(reply).toMatchObject({ stopReason: "completed", content: "answer 3" });
      expect(existsSync(join(workspace, "memory", "history.jsonl"))).toBe(true);
      llm.assertDone();
    } finally {
      await runtime.close();
      await llm.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
