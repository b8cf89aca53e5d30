/**
 * The logging seam. Library code takes a `Logger` (default: silent); the CLI and gateway
 * create a pino logger. Secrets are redacted by key name before anything is written.
 */
import { pino } from "pino";
import { scrubSecretData, scrubSecretText } from "./scrub.js";

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
  const paths = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers.${k}`]);
  const destination =
    options.destination ?? (options.file ? pino.destination({ dest: options.file, mkdir: true, sync: false }) : pino.destination(2));
  const base = pino(
    { level: options.level ?? "info", redact: { paths, censor: "[redacted]" }, base: undefined },
    destination,
  );
  return wrap(base);
}

function wrap(p: pino.Logger): Logger {
  // Key-name redaction misses credentials inside text (URLs quoted by error messages), so
  // messages and string data are scrubbed too — only for lines that will be written.
  const at =
    (level: LogLevel) =>
    (msg: string, data?: Record<string, unknown>): void => {
      if (!p.isLevelEnabled(level)) return;
      p[level](data ? scrubSecretData(data) : {}, scrubSecretText(msg));
    };
  return {
    trace: at("trace"),
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (bindings) => wrap(p.child(scrubSecretData(bindings))),
  };
}
