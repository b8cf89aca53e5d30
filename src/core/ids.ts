import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

function randomSuffix(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const b of bytes) out += ALPHABET[b % 36];
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
