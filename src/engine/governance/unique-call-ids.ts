/**
 * Makes tool call ids unique within a request. Some OpenAI-compatible servers number calls per
 * response (`call_0` on every turn), so a stored history can hold the same id several times;
 * Anthropic refuses a request whose `tool_use` ids repeat, and the orphan pass would otherwise
 * pair a later result with an earlier call. A repeated id gets a suffix and the results in the
 * run right after its message follow it. Copy-on-write: an already unique history comes back
 * as the same array.
 */
import type { AssistantContentPart, Message } from "../../core/messages.js";

/**
 * The first `<base>_<n>` (n ≥ 2) not taken. `next` remembers where the search for each base
 * stopped: `taken` only grows, so the ids below it stay taken, and a history where every
 * response reuses `call_0` costs one step per repeat instead of one per earlier repeat.
 */
function freshId(base: string, taken: ReadonlySet<string>, next: Map<string, number>): string {
  for (let n = next.get(base) ?? 2; ; n++) {
    const id = `${base}_${n}`;
    if (!taken.has(id)) {
      next.set(base, n + 1);
      return id;
    }
  }
}

export function uniqueCallIds(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  const seen = new Set<string>();
  const next = new Map<string, number>();
  /** For the current assistant's result run: original id → ids its results take, in order. */
  let renames: Map<string, string[]> | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    let fixed: Message = m;
    if (m.role === "assistant") {
      renames = undefined;
      let content: AssistantContentPart[] | undefined;
      for (let k = 0; k < m.content.length; k++) {
        const p = m.content[k]!;
        if (p.type !== "toolCall") continue;
        const id = seen.has(p.id) ? freshId(p.id, seen, next) : p.id;
        seen.add(id);
        if (id !== p.id) {
          content ??= m.content.slice();
          content[k] = { ...p, id };
        }
      }
      if (content) {
        fixed = { ...m, content };
        // Stored id → the ids its calls are sent with, in order (the copy and the message side by side).
        renames = new Map();
        for (let k = 0; k < content.length; k++) {
          const sent = content[k]!;
          const stored = m.content[k]!;
          if (sent.type !== "toolCall" || stored.type !== "toolCall") continue;
          const ids = renames.get(stored.id);
          if (ids) ids.push(sent.id);
          else renames.set(stored.id, [sent.id]);
        }
      }
    } else if (m.role === "tool") {
      const id = renames?.get(m.toolCallId)?.shift();
      if (id !== undefined && id !== m.toolCallId) fixed = { ...m, toolCallId: id };
    } else {
      renames = undefined;
    }
    if (fixed !== m && !out) out = messages.slice(0, i);
    if (out) out.push(fixed);
  }
  return out ?? messages;
}
