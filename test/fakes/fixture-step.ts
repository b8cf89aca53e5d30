import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FakeRaw } from "./fake-llm-types.js";

/**
 * Replays the recorded wire responses in `test/fixtures/llm/` (see its README for where each
 * came from) as `raw` steps. The fixtures live in the repository so a fresh clone tests alone.
 */

/** `test/fixtures` of this checkout. */
export function fixturesDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");
}

export function llmFixturePath(name: string): string {
  return join(fixturesDir(), "llm", name);
}

export function readLlmFixture(name: string): string {
  return readFileSync(llmFixturePath(name), "utf8");
}

/** `.chunks.jsonl` holds one data JSON per line; the event name is the payload's `type`. */
function chunksToSse(text: string): string {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const type = (JSON.parse(line) as { type?: unknown }).type;
      return `event: ${String(type)}\ndata: ${line}\n\n`;
    })
    .join("");
}

export interface FixtureStepOptions {
  /** The folder holding the file; default `test/fixtures/llm`. */
  dir?: string;
  status?: number;
  headers?: Record<string, string>;
  eventDelayMs?: number;
}

/**
 * A `raw` step that replays a fixture byte for byte: `.sse` as-is (a missing final blank line
 * is added), `.chunks.jsonl` converted to `event:`/`data:` frames, `.json` as a JSON body whose
 * status comes from the file name (`openai-error-429-…` → 429) unless given.
 */
export function fixtureStep(name: string, options: FixtureStepOptions = {}): FakeRaw {
  const text = options.dir === undefined ? readLlmFixture(name) : readFileSync(join(options.dir, name), "utf8");
  const step: FakeRaw = { kind: "raw", body: text };
  if (name.endsWith(".sse")) {
    step.body = /\n\n$/.test(text) ? text : `${text.replace(/\n?$/, "")}\n\n`;
    step.contentType = "text/event-stream";
  } else if (name.endsWith(".chunks.jsonl")) {
    step.body = chunksToSse(text);
    step.contentType = "text/event-stream";
  } else {
    step.contentType = "application/json";
  }
  const status = options.status ?? Number(/-error-(\d{3})-/.exec(name)?.[1] ?? 200);
  if (status !== 200) step.status = status;
  if (options.headers !== undefined) step.headers = options.headers;
  if (options.eventDelayMs !== undefined) step.eventDelayMs = options.eventDelayMs;
  return step;
}
