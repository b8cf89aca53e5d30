/**
 * Token-budget trimming of a replayed history. The cut always lands on a user message so the
 * model never sees a turn's tool traffic without the request that started it.
 */
import type { Message } from "../core/index.js";

/** Cheap default: serialized size / 4. The engine's governance does the precise count later. */
export function roughTokenEstimate(message: Message): number {
  let chars = 16;
  for (const part of message.content) {
    switch (part.type) {
      case "text":
      case "reasoning":
        chars += part.text.length;
        break;
      case "toolCall":
        chars += part.name.length + part.rawArguments.length;
        break;
      case "image":
        chars += 3000; // a typical image costs ~765 tokens on the common APIs
        break;
      default:
        chars += JSON.stringify(part).length;
    }
  }
  return Math.ceil(chars / 4);
}

/**
 * Consumes messages newest first (the order the store reads them in when trimming) and
 * decides where to cut. `push` returns false once the budget is spent and the kept part
 * starts at a user message; `result()` gives the kept messages oldest first.
 */
export class BudgetTrimmer {
  private readonly reversed: Message[] = [];
  /** Length of `reversed` at the last user message seen (a legal cut). */
  private lastUserCut = 0;
  private used = 0;

  constructor(
    private readonly budget: number,
    private readonly estimate: (message: Message) => number,
  ) {}

  /** Offers the next older message; false means "stop reading, I have enough". */
  push(message: Message): boolean {
    const cost = this.estimate(message);
    if (this.used + cost > this.budget && this.lastUserCut > 0) return false;
    this.used += cost;
    this.reversed.push(message);
    if (message.role === "user") this.lastUserCut = this.reversed.length;
    return true;
  }

  /** Kept messages, oldest first, starting at a user message (empty if none was seen). */
  result(): Message[] {
    return this.reversed.slice(0, this.lastUserCut).reverse();
  }

  /** Tokens of the messages in `result()`. */
  tokens(): number {
    let total = 0;
    for (const m of this.result()) total += this.estimate(m);
    return total;
  }
}

/** Trims an oldest-first history to `budget` tokens at a user-turn boundary. */
export function trimToBudget(messages: readonly Message[], budget: number, estimate = roughTokenEstimate): Message[] {
  const trimmer = new BudgetTrimmer(budget, estimate);
  for (let i = messages.length - 1; i >= 0; i--) if (!trimmer.push(messages[i]!)) break;
  return trimmer.result();
}
