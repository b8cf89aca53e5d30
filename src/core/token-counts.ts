/**
 * Exact token counts that travel with messages: a store saves a message's count with its row
 * and hands it back with the message it reads, so a history replayed in a new process (or as
 * new objects) is not tokenised again. A count is only valid under the rules it was made by,
 * named by its `basis` (tokenizer and framing version); a reader with another basis counts anew.
 *
 * Counts are attached beside the message (a WeakMap), never on it: messages go to providers
 * as they are, and an edited copy of a message is a new object without the old count.
 */
import type { Message } from "./messages.js";

export interface TokenCount {
  /** The counting rules, e.g. `o200k_base#1`. */
  basis: string;
  tokens: number;
}

/**
 * The exact count of a message for storing with it, or undefined when there is none to give
 * cheaply (no tokenizer loaded yet): the row is then saved without one.
 */
export type MessageTokenCounter = (message: Message) => TokenCount | undefined;

const attached = new WeakMap<Message, TokenCount>();

/** Remembers `count` for this message object (a store does this for rows it reads). */
export function attachTokenCount(message: Message, count: TokenCount): void {
  attached.set(message, count);
}

/** The count attached to this message object under `basis`, if any. */
export function attachedTokenCount(message: Message, basis: string): number | undefined {
  const count = attached.get(message);
  return count !== undefined && count.basis === basis ? count.tokens : undefined;
}
