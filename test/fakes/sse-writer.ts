import type { ServerResponse } from "node:http";
import type { FakeReply } from "./fake-llm-types.js";
import type { SseFrame } from "./render-common.js";

/**
 * Writes SSE frames to a response, one `write` per event so the client sees them arrive
 * separately, and injects the scripted faults. Only the test fake writes SSE by hand; product
 * code parses SSE with eventsource-parser.
 */

export function formatSseFrame(frame: SseFrame): string {
  const event = frame.event === undefined ? "" : `event: ${frame.event}\n`;
  return `${event}data: ${frame.data}\n\n`;
}

/** Splits an SSE body into events (blank-line separated), each keeping its trailing `\n\n`. */
export function splitSseEvents(body: string): string[] {
  const normalised = /\n\n$/.test(body) ? body : `${body.replace(/\n?$/, "")}\n\n`;
  return normalised
    .split(/(?<=\n\n)/)
    .filter((part) => part.trim() !== "");
}

export interface PlayOptions {
  chunkDelayMs?: number;
  /** What `malformed_chunk` writes (default: a half chat chunk). */
  malformed?: string;
  fault?: FakeReply["fault"];
  /** Resolves false when the server is shutting down, so a delayed stream stops early. */
  sleep: (ms: number) => Promise<boolean>;
  hold?: FakeReply["hold"];
  /** Resolves true when `until` settles, or false when the server is shutting down. */
  wait?: (until: Promise<unknown>) => Promise<boolean>;
}

/**
 * A broken event, as a buggy proxy might send: the first half of a real frame's JSON, under
 * that frame's `event:` name so SDKs that skip unnamed events still try to parse it.
 */
export function malformedFrame(frame: SseFrame | undefined): string {
  const data = frame?.data ?? '{"choices": [{"delta": {"content": "oops"}}]}';
  const event = frame?.event === undefined ? "" : `event: ${frame.event}\n`;
  return `${event}data: ${data.slice(0, Math.max(1, Math.floor(data.length / 2)))}\n\n`;
}

function gone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded;
}

/**
 * Plays pre-formatted SSE events. Fault positions count events written: `cut` after 2 destroys
 * the socket once two events went out; `stall` stops writing and leaves the socket open until
 * the client aborts or the fake closes.
 */
export async function playEvents(res: ServerResponse, events: string[], opts: PlayOptions): Promise<void> {
  const fault = opts.fault;
  let lastWrite: Promise<void> = Promise.resolve();
  const write = (text: string): void => {
    lastWrite = new Promise((resolve) => res.write(text, () => resolve()));
  };
  // One pass past the last event so a fault placed after every event still fires.
  for (let i = 0; i <= events.length; i++) {
    if (fault !== undefined && fault.type !== "no_done" && i === fault.afterChunks) {
      if (fault.type === "cut") {
        // Let the events already written reach the client, then drop the connection mid-body.
        await lastWrite;
        res.socket?.destroy();
        return;
      }
      if (fault.type === "stall") return;
      write(opts.malformed ?? malformedFrame(undefined));
    }
    const event = events[i];
    if (event === undefined) break;
    if (opts.hold !== undefined && i === opts.hold.afterChunks) {
      await lastWrite;
      if (opts.wait === undefined || !(await opts.wait(opts.hold.until))) return;
    }
    if (i > 0 && (opts.chunkDelayMs ?? 0) > 0 && !(await opts.sleep(opts.chunkDelayMs ?? 0))) return;
    if (gone(res)) return;
    write(event);
  }
  if (!gone(res)) res.end();
}

/** Plays rendered frames; `no_done` drops the terminal event ([DONE], message_stop, response.completed). */
export async function playFrames(res: ServerResponse, frames: SseFrame[], opts: PlayOptions): Promise<void> {
  const fault = opts.fault;
  const kept = fault?.type === "no_done" ? frames.filter((f) => f.terminal !== true) : frames;
  const malformed = fault?.type === "malformed_chunk" ? malformedFrame(kept[fault.afterChunks] ?? kept.at(-1)) : undefined;
  await playEvents(res, kept.map(formatSseFrame), { ...opts, malformed });
}
