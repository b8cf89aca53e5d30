/**
 * Recognises a platform delivery seen before (a webhook the platform sent again because our
 * answer seemed late or lost), so the event is answered once. In one process a bounded memory
 * is enough; workers sharing a PostgreSQL store also ask the store, where the first worker to
 * record the id wins, so a retry that reaches another worker is dropped there too.
 */
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "./lru-set.js";

export interface InboundDedup {
  /** True the first time `key` (`<channel>:<platform's event id>`) is seen; false for a repeat. */
  firstSeen(key: string): Promise<boolean>;
}

/** Remembers the most recent ids of this process. */
export class MemoryDedup implements InboundDedup {
  private readonly seen: LruSet;

  constructor(capacity = 10_000) {
    this.seen = new LruSet(capacity);
  }

  firstSeen(key: string): Promise<boolean> {
    if (this.seen.has(key)) return Promise.resolve(false);
    this.seen.add(key);
    return Promise.resolve(true);
  }
}

/**
 * Asks the shared store (`claim`) after this process's own memory. When the store cannot be
 * reached the event is handled (a possible duplicate answer beats a lost message) and a
 * warning says so.
 */
export class SharedDedup implements InboundDedup {
  private readonly local = new MemoryDedup();

  constructor(
    private readonly claim: (key: string) => Promise<boolean>,
    private readonly logger: Logger,
  ) {}

  async firstSeen(key: string): Promise<boolean> {
    if (!(await this.local.firstSeen(key))) return false;
    try {
      return await this.claim(key);
    } catch (error) {
      this.logger.warn("delivery id not checked against the other workers (store unreachable); handling it", { key, error: errorMessage(error) });
      return true;
    }
  }
}
