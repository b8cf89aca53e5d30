/**
 * nanobot as a product: the AgentLoop's `process()` with a Runtime from a config (SQLite session
 * store, context builder, built-in tools, per-session lanes) — the level of the TS nanobot
 * port's `processDirect`. The concurrency gate is raised to the workload's session count so the
 * comparison with the ungated peers is like for like (the gateway bench measures the gate).
 */
import { writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { join } from "node:path";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import type { AgentProfile } from "../../src/agent/runtime.js";
import { Runtime } from "../../src/agent/runtime.js";
import { loadConfig } from "../../src/config/load.js";
import { stateDbPath } from "../../src/config/paths.js";
import { assistantMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";
import { bigReadTool, lookupTool, slowReadTool } from "./nanobot-tools.js";
import type { Contender, ContenderSetup } from "./types.js";
import { INSTRUCTIONS, priorTurns } from "./types.js";

/** Adds the benchmark tools to every agent profile (the config has no way to name code tools). */
class BenchRuntime extends Runtime {
  override async resolveAgent(name?: string, overrides: { modelRef?: string } = {}): Promise<AgentProfile> {
    const profile = await super.resolveAgent(name, overrides);
    return { ...profile, tools: [...profile.tools, lookupTool, slowReadTool, bigReadTool] };
  }
}

export async function createContender(setup: ContenderSetup): Promise<Contender> {
  const home = join(setup.workDir, "home");
  const configPath = join(setup.workDir, "nanobot.json");
  const agent = (model: string) => ({ model: `custom/${model}`, instructions: INSTRUCTIONS, contextWindow: 1_000_000 });
  writeFileSync(
    configPath,
    JSON.stringify({
      providers: { custom: { apiBase: setup.baseURL, apiKey: "bench" } },
      agents: {
        defaults: { model: "custom/bench-chat", workspace: join(setup.workDir, "workspace") },
        loop: agent("bench-loop"),
        parallel: agent("bench-parallel"),
        chat: agent("bench-chat"),
        heavy: agent("bench-heavy"),
      },
    }),
  );
  // `storeUrl`: a PostgreSQL store instead of SQLite in the home (the long-session bench's PostgreSQL rows).
  const env = { NANOBOT_HOME: home, HOME: setup.workDir, ...(setup.storeUrl ? { NANOBOT_STORE_URL: setup.storeUrl } : {}) };
  const loaded = await loadConfig({ configPath, env, cwd: setup.workDir });
  const runtime = new BenchRuntime({ config: loaded.config, home, env, connectMcp: false });
  const loop = new AgentLoop({ runtime, maxConcurrent: 1_000 });
  let parallelRuns = 0;
  let loopHistory = 0;

  const turn = async (sessionKey: string, agentName: string, content: string) => {
    const reply = await loop.process({ sessionKey, agent: agentName, content, channel: "api" });
    if (reply.error) throw new Error(reply.error);
    return reply.content;
  };

  return {
    async prepareLoop(history, count, place = "memory") {
      loopHistory = history;
      if (history === 0) return;
      const turns = priorTurns(history);
      const store = runtime.store();
      // Seeded as earlier turns of a running product write it: well inside the window the product
      // counts tokens roughly (the tokenizer loads only near it), so its rows carry no counts.
      for (let i = 0; i < count; i++) {
        // Fresh messages per session: every stored message has its own id.
        const prior: Message[] = turns.map((t) => (t.role === "user" ? userMessage(t.text) : assistantMessage(t.text)));
        await store.appendMessages(`bench:loop-${history}-${i}`, prior);
        // In memory: the store has read the session once, as for one the process served before.
        if (place === "memory") await store.loadHistory(`bench:loop-${history}-${i}`);
      }
      // The seeded rows are in the write-ahead log, which a store that had held them for a while
      // would have folded into the database long ago (the gateway does every half second). Left
      // there, the first commits of the measured turns would each copy megabytes of seeding.
      // RESTART: the next commit starts the log over. Not TRUNCATE: emptying the file changes
      // the log's header, which other connections take for a write (`PRAGMA data_version`) and
      // so forget what they remember of the sessions; the gateway's own checkpoints never do.
      if (setup.storeUrl) return;
      const db = new Database(stateDbPath(home));
      try {
        db.pragma("wal_checkpoint(RESTART)");
      } finally {
        db.close();
      }
    },
    loopTurn: (index) => turn(`bench:loop-${loopHistory}-${index}`, "loop", `Question ${index}: look up alpha and beta.`),
    parallelTurn: () => turn(`bench:parallel-${parallelRuns++}`, "parallel", "Read the four files."),
    chatTurn: (session, text) => turn(`bench:${session}`, "chat", text),
    heavyTurn: (index) => turn(`bench:heavy-${index}`, "heavy", "Read the thirty files and sum them up."),
    async close() {
      await loop.stop();
      await runtime.close();
    },
  };
}
