/**
 * Keeps the head and the tail of a stream of text within a fixed budget. Memory stays at
 * about the budget plus one chunk however much is pushed, so a command printing 10 MB is
 * never held in full (let alone twice).
 */
import { fmt } from "./walk.js";

export class HeadTailBuffer {
  private head = "";
  private tailChunks: string[] = [];
  private tailLength = 0;
  private total = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(readonly cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  get totalChars(): number {
    return this.total;
  }

  /** Characters currently held in memory (bounded by about cap + one chunk). */
  get retainedChars(): number {
    return this.head.length + this.tailLength;
  }

  push(chunk: string): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.head.length < this.headCap) {
      const room = this.headCap - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length === 0) return;
    this.tailChunks.push(rest);
    this.tailLength += rest.length;
    // Drop whole chunks that fell out of the tail window; the boundary chunk is cut on read.
    while (this.tailChunks.length > 1 && this.tailLength - (this.tailChunks[0]?.length ?? 0) >= this.tailCap) {
      this.tailLength -= this.tailChunks.shift()?.length ?? 0;
    }
    if (this.tailChunks.length === 1 && this.tailLength > this.tailCap * 2) {
      const only = this.tailChunks[0] ?? "";
      this.tailChunks = [only.slice(-this.tailCap)];
      this.tailLength = this.tailCap;
    }
  }

  /** The kept text; when something was dropped, a note in the middle says how much. */
  toString(): string {
    const tail = this.tailChunks.join("").slice(-this.tailCap);
    const elided = this.total - this.head.length - tail.length;
    if (elided <= 0) return this.head + tail;
    return `${this.head}\n\n... [${fmt(elided)} characters elided; ${fmt(this.total)} in total] ...\n\n${tail}`;
  }
}
