/**
 * Makes tool call ids unique within a request. Some OpenAI-compatible servers number calls per
 * response (`call_0` on every turn), so a stored history can hold the same id several times;
 * Anthropic refuses a request whose `tool_use` ids repeat, and the orphan pass would otherwise
 * pair a later result with an earlier call. A repeated id gets a suffix and the results in the
 * run right after its message follow it. Copy-on-write: an already unique history comes back
 * as the same array.
 */
import type { AssistantContentPart, Message } from "../../core/messages.js";

function freshId(base: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const id = `${base}_${n}`;
    if (!taken.has(id)) return id;
  }
}

export function uniqueCallIds(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  const seen = new Set<string>();
  /** For the current assistant's result run: original id → ids its results take, in order. */
  let renames: Map<string, string[]> | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    let fixed: Message = m;
    if (m.role === "assistant") {
      renames = undefined;
      let content: AssistantContentPart[] | undefined;
      const queue = new Map<string, string[]>();
      m.content.forEach((p, k) => {
        if (p.type !== "toolCall") return;
        let id = p.id;
        if (seen.has(id)) {
          id = freshId(p.id, seen);
          content ??= m.content.slice();
          content[k] = { ...p, id };
        }
        seen.add(id);
        queue.set(p.id, [...(queue.get(p.id) ?? []), id]);
      });
      if (content) {
        fixed = { ...m, content };
        renames = queue;
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
