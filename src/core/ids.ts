import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** Random bytes fetched 4 KiB at a time: a turn makes dozens of ids, one syscall each otherwise. */
const POOL_SIZE = 4096;
/**
 * The first fill's size: small, so the pool is refilled again within the first few dozen ids.
 * V8 records what a call does only once the function has run a few times (it allocates the
 * feedback lazily); a refill seen only on the very first call left optimised code without
 * feedback for it, and the first refill after optimisation deoptimised the function.
 */
const FIRST_FILL = 128;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** `length` random characters of [0-9a-z], from the pool (not for secrets: ids only). */
export function randomSuffix(length: number): string {
  if (poolOffset + length > pool.length) {
    pool = randomBytes(pool.length === 0 ? FIRST_FILL : POOL_SIZE);
    poolOffset = 0;
  }
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[(pool[poolOffset + i] ?? 0) % 36];
  poolOffset += length;
  return out;
}

let lastTime = 0;
let counter = 0;

/**
 * A short id that sorts by creation time within a process: `<prefix>_<time36><counter36><random>`.
 * Sortability keeps storage rows and log lines in creation order without a second column.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now === lastTime) counter++;
  else {
    lastTime = now;
    counter = 0;
  }
  const time = now.toString(36).padStart(9, "0");
  const seq = counter.toString(36).padStart(3, "0");
  return `${prefix}_${time}${seq}${randomSuffix(8)}`;
}

export const messageId = (): string => newId("msg");
export const toolCallId = (): string => newId("call");
export const turnId = (): string => newId("turn");
export const runId = (): string => newId("run");
