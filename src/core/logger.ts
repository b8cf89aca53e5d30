/**
 * The logging seam. Library code takes a `Logger` (default: silent); the CLI and gateway
 * create a pino logger. Secrets are redacted by key name before anything is written.
 *
 * pino (and the log file) is set up on the first line that will be written: `agent -m` at its
 * default `warn` level usually writes none, and should not pay for loading it.
 */
import type * as Pino from "pino";
import { lazyPackage } from "./lazy-package.js";
import { scrubSecretData, scrubSecretText } from "./scrub.js";

const pinoPackage = lazyPackage<typeof Pino>("pino");

/** pino's numeric levels. */
const LEVEL_VALUES: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50 };

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

export interface Logger {
  trace(msg: string, data?: Record<string, unknown>): void;
  debug(msg: string, data?: Record<string, unknown>): void;
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  error(msg: string, data?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

const noop = (): void => undefined;

export const silentLogger: Logger = {
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
};

/** Key names whose values never reach a log line. */
export const SECRET_KEYS = [
  "apiKey",
  "api_key",
  "authorization",
  "Authorization",
  "token",
  "botToken",
  "password",
  "secret",
  "clientSecret",
];

export interface LoggerOptions {
  level?: LogLevel;
  /** Write JSON lines to this file instead of stderr. */
  file?: string;
  /** Override the destination (tests). */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? "info";
  let base: Pino.Logger | undefined;
  const root = (): Pino.Logger => {
    if (base) return base;
    const { pino } = pinoPackage();
    const paths = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers.${k}`]);
    const destination =
      options.destination ?? (options.file ? pino.destination({ dest: options.file, mkdir: true, sync: false }) : pino.destination(2));
    base = pino({ level, redact: { paths, censor: "[redacted]" }, base: undefined }, destination);
    return base;
  };
  return wrap(root, LEVEL_VALUES[level]);
}

function wrap(get: () => Pino.Logger, threshold: number): Logger {
  // Key-name redaction misses credentials inside text (URLs quoted by error messages), so
  // messages and string data are scrubbed too — only for lines that will be written.
  const at =
    (level: LogLevel) =>
    (msg: string, data?: Record<string, unknown>): void => {
      if (LEVEL_VALUES[level] < threshold) return;
      get()[level](data ? scrubSecretData(data) : {}, scrubSecretText(msg));
    };
  return {
    trace: at("trace"),
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (bindings) => {
      let child: Pino.Logger | undefined;
      return wrap(() => (child ??= get().child(scrubSecretData(bindings))), threshold);
    },
  };
}
