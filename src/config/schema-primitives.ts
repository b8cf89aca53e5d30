/**
 * Small zod building blocks whose error text is already the user-facing expectation, so a
 * failed parse turns into `file: key.path: expected a positive integer, got "lots"` without a
 * lookup table. Every message here starts with "expected".
 */
import { z } from "zod";
import { validateSchedule } from "../cron/schedule.js";

function expectation(text: string): { error: string } {
  return { error: `expected ${text}` };
}

/**
 * One shared instance per building block: zod schemas are immutable (`.optional()` and friends
 * wrap, never change), and building each of the config schema's ~200 uses anew cost ~10 ms of
 * every start.
 */
function shared<S>(build: () => S): () => S {
  let schema: S | undefined;
  return () => (schema ??= build());
}

/** An integer > 0 (token limits, ports, counts). */
export const positiveInt = shared(() => {
  const e = expectation("a positive integer");
  return z.number(e).int(e).positive(e);
});

/** An integer ≥ 0 (timeouts where 0 means "none", retry counts). */
export const nonNegativeInt = shared(() => {
  const e = expectation("a non-negative integer");
  return z.number(e).int(e).nonnegative(e);
});

/** A number ≥ 0 (timeouts in seconds, sampling temperature). */
export const nonNegativeNumber = shared(() => {
  const e = expectation("a non-negative number");
  return z.number(e).nonnegative(e);
});

/** A number between 0 and 1 inclusive. */
export const ratio = shared(() => {
  const e = expectation("a number between 0 and 1");
  return z.number(e).min(0, e).max(1, e);
});

/** A number in [min, max] (a key whose range the Python nanobot's schema fixes). */
export function numberBetween(min: number, max: number) {
  const e = expectation(`a number between ${min} and ${max}`);
  return z.number(e).min(min, e).max(max, e);
}

/** An integer in [min, max]. */
export function intBetween(min: number, max: number) {
  const e = expectation(`an integer between ${min} and ${max}`);
  return z.number(e).int(e).min(min, e).max(max, e);
}

/** A TCP port number. */
export const port = shared(() => {
  const e = expectation("a port number (1-65535)");
  return z.number(e).int(e).min(1, e).max(65535, e);
});

export const str = shared(() => {
  return z.string(expectation("a string"));
});

export const bool = shared(() => {
  return z.boolean(expectation("true or false"));
});

/** One of a fixed set of strings; the message lists the allowed values. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const list = values.map((v) => JSON.stringify(v)).join(", ");
  return z.enum(values, expectation(`one of ${list}`));
}

/** A list of strings. */
export const stringArray = shared(() => {
  return z.array(str(), expectation("a list of strings"));
});

/**
 * The Go nanobot's `StringList`: a YAML list, or one comma-separated string ("a, b").
 * Normalised to an array.
 */
export const stringList = shared(() => {
  return z
    .union([str(), stringArray()], expectation("a string or a list of strings"))
    .transform((v) =>
      typeof v === "string"
        ? v
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s.length > 0)
        : v,
    );
});

/** A map of string → string (headers, environment variables). */
export const stringMap = shared(() => {
  return z.record(z.string(), str(), expectation("a map of names to strings"));
});

/** A user or chat id: YAML happily turns telegram ids into numbers, so numbers are accepted. */
export const idString = shared(() => {
  return z.union([str(), z.number()], expectation("a string or a number")).transform((v) => String(v));
});

/** A cron expression croner can run (`"0 3 * * *"`); the message carries croner's reason. */
export function cronExpression() {
  return str().check((ctx) => {
    try {
      validateSchedule({ kind: "cron", expr: ctx.value }, Date.now());
    } catch (err) {
      const reason = (err as Error).message.replace(/^invalid cron expression "[^"]*": /, "");
      ctx.issues.push({ code: "custom", input: ctx.value, message: `expected a cron expression such as "0 3 * * *" (${reason})` });
    }
  });
}
