/**
 * Cold start: from spawning a fresh process to the fake LLM receiving its first request (the
 * user-visible "time to first token" floor), and to the process's exit. nanobot runs as shipped
 * (`node bin/nanobot.js agent -m hi`, i.e. the build in dist/, with a config pointing at the
 * fake); each peer runs its minimal one-turn script from bench/peers/cold/ with plain node.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PEERS_DIR } from "./contenders/types.js";
import { REPO_DIR, runToExit } from "./support/processes.js";
import type { FakeLLM } from "./support/processes.js";
import { spread } from "./support/stats.js";
import type { Spread } from "./support/stats.js";

export interface ColdStartRow {
  contender: string;
  command: string;
  toFirstRequestMs: Spread;
  toExitMs: Spread;
}

export interface ColdStartResult {
  rows: ColdStartRow[];
}

interface Target {
  contender: string;
  command: string;
  args: (baseURL: string) => string[];
  /** No LLM call: only the time to exit is measured. */
  noRequest?: boolean;
}

/** The shipped CLI (it loads dist/, so `npm install`/`npm run build` must have run). */
const NANOBOT_BIN = join(REPO_DIR, "bin/nanobot.js");

const TARGETS: Target[] = [
  { contender: "nanobot --version", command: "node bin/nanobot.js --version", args: () => [NANOBOT_BIN, "--version"], noRequest: true },
  { contender: "nanobot", command: "node bin/nanobot.js agent -m hi", args: () => [NANOBOT_BIN, "agent", "-m", "hi", "--no-stream"] },
  { contender: "openai-agents", command: "node bench/peers/cold/openai-agents.mjs", args: (u) => [`${PEERS_DIR}cold/openai-agents.mjs`, u] },
  { contender: "ai-sdk", command: "node bench/peers/cold/ai-sdk.mjs", args: (u) => [`${PEERS_DIR}cold/ai-sdk.mjs`, u] },
  { contender: "jcheese-nanobot", command: "node bench/peers/cold/jcheese-nanobot.mjs", args: (u) => [`${PEERS_DIR}cold/jcheese-nanobot.mjs`, u] },
];

export async function measureColdStarts(fake: FakeLLM, runs: number, errors: string[]): Promise<ColdStartResult> {
  const dir = mkdtempSync(join(tmpdir(), "nanobot-bench-cold-"));
  const configPath = join(dir, "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({ providers: { custom: { apiBase: fake.baseURL, apiKey: "bench" } }, agents: { defaults: { model: "custom/bench-chat", workspace: join(dir, "workspace") } } }),
  );
  const env = { ...process.env, HOME: dir, NANOBOT_HOME: join(dir, "home"), NANOBOT_CONFIG: configPath, NO_COLOR: "1" };
  const first = new Map<string, number[]>();
  const exit = new Map<string, number[]>();
  const failed = new Set<string>();
  try {
    for (let run = 0; run < runs; run++) {
      for (const t of TARGETS) {
        if (failed.has(t.contender)) continue;
        await fake.reset(0);
        const out = await runToExit(process.execPath, t.args(fake.baseURL), { cwd: dir, env, timeoutMs: 60_000 });
        const stats = await fake.stats();
        if (out.code !== 0 || (!t.noRequest && stats.firstRequestAt === null)) {
          failed.add(t.contender);
          errors.push(`cold start ${t.contender}: exit ${out.code}, ${stats.requests} requests: ${(out.stderr || out.stdout).trim().split("\n").slice(-3).join(" | ")}`);
          continue;
        }
        if (stats.firstRequestAt !== null) first.set(t.contender, [...(first.get(t.contender) ?? []), stats.firstRequestAt - out.startedAt]);
        exit.set(t.contender, [...(exit.get(t.contender) ?? []), out.endedAt - out.startedAt]);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = TARGETS.filter((t) => exit.has(t.contender)).map((t) => ({
    contender: t.contender,
    command: t.command,
    toFirstRequestMs: spread(first.get(t.contender) ?? []),
    toExitMs: spread(exit.get(t.contender) ?? []),
  }));
  return { rows };
}
