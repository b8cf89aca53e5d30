/**
 * Which agents a `chat-with-<agent>` call is nested in, so a cycle (A → B → A) or a chain deeper
 * than `agents.defaults.maxSubagentDepth` is refused with a tool error the model can read,
 * instead of recursing until the process runs out of something.
 *
 * The chain travels with the call through the sub-agent's session key: each `chat-with-*` call
 * runs the other agent in a fresh session, registered here with the chain that led to it, and
 * every tool call of that agent carries that session key in its ToolContext. A background
 * `spawn` run keeps its origin session's key (and holds its entry), so sub-agents it calls are
 * counted from the same chain. A session not registered here is a top-level turn.
 */

/** `agents.defaults.maxSubagentDepth` when the config does not set it. */
export const DEFAULT_MAX_SUBAGENT_DEPTH = 3;

interface Entry {
  chain: readonly string[];
  /** The sub-agent turn itself plus background spawn runs still using the session. */
  holders: number;
}

const chains = new Map<string, Entry>();

/** The agents above and including `agent` for a call made in `sessionKey`. */
export function chainFor(sessionKey: string | undefined, agent: string): readonly string[] {
  const entry = sessionKey ? chains.get(sessionKey) : undefined;
  if (!entry) return [agent];
  // A chain always ends with the agent whose session it is; defend against a mismatch.
  return entry.chain.at(-1) === agent ? entry.chain : [...entry.chain, agent];
}

/**
 * Why `chain` may not call `next`, or undefined when it may. Depth is the nesting level of the
 * called agent: a top-level agent's sub-agent is depth 1, so with 3, A → B → C → D runs and D's
 * own sub-agent calls are refused.
 */
export function refuseSubagentCall(chain: readonly string[], next: string, maxDepth: number): string | undefined {
  const path = [...chain, next].join(" → ");
  if (chain.includes(next)) return `sub-agent cycle: ${path} refused (${next} is already working on this request; answer without it)`;
  if (chain.length > maxDepth) {
    return `sub-agent depth limit ${maxDepth} reached: ${path} refused (agents.defaults.maxSubagentDepth; answer without it)`;
  }
  return undefined;
}

/** Registers the session a sub-agent runs in; the returned function releases it. */
export function enterSubagentSession(sessionKey: string, chain: readonly string[]): () => void {
  chains.set(sessionKey, { chain, holders: 1 });
  return once(() => release(sessionKey));
}

/**
 * Keeps a registered session's chain alive while a background run (spawn) works in it after
 * the sub-agent turn that started it has ended. A no-op for unregistered sessions.
 */
export function holdSubagentSession(sessionKey: string | undefined): () => void {
  const entry = sessionKey ? chains.get(sessionKey) : undefined;
  if (!sessionKey || !entry) return () => undefined;
  entry.holders++;
  return once(() => release(sessionKey));
}

/** Registered sessions (tests check nothing is left behind). */
export function activeSubagentSessions(): number {
  return chains.size;
}

function release(sessionKey: string): void {
  const entry = chains.get(sessionKey);
  if (!entry) return;
  if (--entry.holders <= 0) chains.delete(sessionKey);
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
