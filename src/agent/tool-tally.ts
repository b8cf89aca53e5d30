/**
 * Tool calls a turn made and how many failed, per tool, counted from its `tool_result`
 * events, for `/metrics` (the reply carries it to the `turn_completed` observers).
 */
import type { AgentEvent } from "../core/events.js";

export type ToolTally = Record<string, { calls: number; errors: number }>;

export class ToolTallyCounter {
  private readonly tally: ToolTally = {};

  /** Counts `event` when it is a tool result; other events pass by. */
  readonly observe = (event: AgentEvent): void => {
    if (event.type !== "tool_result") return;
    const entry = (this.tally[event.result.toolName] ??= { calls: 0, errors: 0 });
    entry.calls++;
    if (event.result.isError) entry.errors++;
  };

  /** `{ toolTally }` for a reply, or nothing when no tool ran. */
  get field(): { toolTally?: ToolTally } {
    return Object.keys(this.tally).length > 0 ? { toolTally: this.tally } : {};
  }
}
