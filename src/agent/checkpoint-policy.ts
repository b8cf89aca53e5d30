/**
 * Which of a turn's checkpoints the product writes to the store before the turn closes.
 *
 * The closing (commit, rollback or stop) always writes every message the run produced, so a
 * checkpoint only matters if the process dies before it. What a crash would lose decides:
 * - a round's calls are written *before* they run when a called tool may act (or a hook may act
 *   on the call): the history then shows the call, closed as interrupted, and the model and the
 *   user know something may have happened;
 * - a finished round of tools that may act is written with its results;
 * - a round of read-only calls changed nothing. It is written when it took long enough that
 *   redoing it would hurt (`SLOW_READ_ONLY_ROUND_MS`), or when what is still unwritten holds a
 *   message from the user (injected mid-turn: nothing the user said is lost). A quick one is
 *   written with the next checkpoint that is, or with the closing: one write transaction less
 *   per round (issue 25; a 3-round turn writes twice instead of four times).
 * `/stop` keeps the last checkpoint in memory either way, written or not.
 */
import type { Checkpoint } from "../core/events.js";
import type { ToolCallPart } from "../core/messages.js";
import type { AgentHooks } from "../engine/hooks.js";
import type { Tool } from "../tools/tool.js";

/** A read-only round that ran at least this long is written on its own. */
export const SLOW_READ_ONLY_ROUND_MS = 1_000;

export class CheckpointPolicy {
  private readonly readOnly: ReadonlySet<string>;
  /** A hook may act on any call, so every round is treated as one that may act. */
  private readonly hooked: boolean;
  /** Messages of the run already in the store (a checkpoint's `newMessages` prefix). */
  private written = 0;
  private roundStartedAt = 0;
  private roundWritten = false;

  constructor(
    tools: readonly Tool[],
    hooks: AgentHooks | readonly AgentHooks[] | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.hooked = hooks !== undefined && (!Array.isArray(hooks) || hooks.length > 0);
    this.readOnly = new Set(tools.filter((t) => t.readOnly === true).map((t) => t.name));
  }

  /** Whether `checkpoint` must be written now. Call `wrote` once it is. */
  shouldWrite(checkpoint: Checkpoint): boolean {
    if (checkpoint.phase === "final_response") return false;
    if (checkpoint.phase === "awaiting_tools") {
      this.roundStartedAt = this.now();
      this.roundWritten = this.hooked || this.mayAct(checkpoint.pendingToolCalls ?? []);
      return this.roundWritten || this.holdsUserInput(checkpoint);
    }
    return this.roundWritten || this.now() - this.roundStartedAt >= SLOW_READ_ONLY_ROUND_MS || this.holdsUserInput(checkpoint);
  }

  wrote(checkpoint: Checkpoint): void {
    this.written = checkpoint.newMessages.length;
  }

  private mayAct(calls: readonly ToolCallPart[]): boolean {
    return calls.length === 0 || calls.some((c) => !this.readOnly.has(c.name));
  }

  private holdsUserInput(checkpoint: Checkpoint): boolean {
    const messages = checkpoint.newMessages;
    for (let i = this.written; i < messages.length; i++) if (messages[i]!.role === "user") return true;
    return false;
  }
}
