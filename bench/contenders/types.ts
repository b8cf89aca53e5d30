/**
 * The workload functions every contender adapter exposes, so one worker drives nanobot and each
 * peer through the same scripted conversations (see bench/README.md for the scripts).
 */
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface ContenderSetup {
  /** The fake LLM's Chat Completions base URL (`http://127.0.0.1:N/v1`). */
  baseURL: string;
  /** A private temp dir (workspace, session files, HOME for peers that write there). */
  workDir: string;
  /** nanobot-loop only: a `postgres://` store URL instead of SQLite in the temp dir. */
  storeUrl?: string;
}

/**
 * Where a prepared conversation's history is when its turn starts. `memory`: the process holds
 * the session already, as it does for a session it served before (the two products' session
 * caches; the engines only ever take history from the caller). `disk`: the session is only in
 * the product's store (its first turn since the process started: read and parsed from disk).
 * `lived` (the two products): as `memory`, and the contender has already answered one turn in
 * that session, so the measured turn is the conversation's second in the process: whatever a
 * product does once to a history it takes over (nanobot summarises one past its token budget) is done,
 * as it would be in a conversation the assistant has been having. The worker runs that first
 * turn, untimed (see worker.ts).
 */
export type HistoryPlace = "memory" | "disk" | "lived";

/** The contenders with a session store of their own; only they have a `disk` place. */
export const STORED_CONTENDERS: readonly string[] = ["nanobot-loop", "jcheese-nanobot"];

export interface Contender {
  /** Makes `count` independent conversations that each start from `history` prior messages (in memory unless `place` says disk). */
  prepareLoop(history: number, count: number, place?: Exclude<HistoryPlace, "lived">): Promise<void>;
  /** Runs conversation `index` of the prepared ones: the 3-round `bench-loop` script. */
  loopTurn(index: number): Promise<string>;
  /** One turn of the `bench-parallel` script: 4 `slow_read` calls (200 ms each) in one round. */
  parallelTurn(): Promise<string>;
  /** One plain turn (`bench-chat`) in a session that keeps its history across turns. */
  chatTurn(session: string, text: string): Promise<string>;
  /** One `bench-heavy` turn in a fresh session: 30 rounds of one `big_read` call (20 KB each). */
  heavyTurn?(index: number): Promise<string>;
  close?(): Promise<void>;
}

export type CreateContender = (setup: ContenderSetup) => Promise<Contender>;

/**
 * The `count` conversations of a loop workload, prepared for `place`; for `lived`, in memory and
 * each answering its first turn here, untimed, so the caller measures their second.
 */
export async function prepareLoopSessions(c: Contender, history: number, count: number, place: HistoryPlace, check: (answer: string) => void): Promise<void> {
  await c.prepareLoop(history, count, place === "lived" ? "memory" : place);
  if (place === "lived") for (let i = 0; i < count; i++) check(await c.loopTurn(i));
}

/** How the worker marks the measured window of a loop job on stdout, for `profile-jit.ts`. */
export const WINDOW_MARK = "=== bench window";

/** The answer the fake LLM gives; a contender that returns anything else failed. */
export const EXPECTED_ANSWER = "The benchmark answer: 42.";
export const SLOW_TOOL_MS = 200;
export const INSTRUCTIONS = "You are a benchmark agent. Use the tools when asked.";

/** Prior conversation: alternating user/assistant text, the same for every contender. */
export function priorTurns(count: number): { role: "user" | "assistant"; text: string }[] {
  const out: { role: "user" | "assistant"; text: string }[] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      i % 2 === 0
        ? { role: "user", text: `Earlier question ${i}: what does the file at notes/${i}.md say about the deployment?` }
        : { role: "assistant", text: `Earlier answer ${i}: it describes the deployment steps and the rollback plan in detail.` },
    );
  }
  return out;
}

export const PEERS_DIR = fileURLToPath(new URL("../peers/", import.meta.url));

export function peersInstalled(): boolean {
  return existsSync(`${PEERS_DIR}node_modules`);
}

/**
 * Imports a package installed in `bench/peers/node_modules` (not a product dependency, so not
 * resolvable from here, and untyped on purpose: typecheck must pass before the peers install).
 */
export async function peerImport<T>(name: string): Promise<T> {
  const loader = (await import(pathToFileURL(`${PEERS_DIR}load.mjs`).href)) as { load(n: string): Promise<unknown> };
  return (await loader.load(name)) as T;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
