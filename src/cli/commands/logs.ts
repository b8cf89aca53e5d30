/**
 * `nanobot logs [-f] [--level L] [--json] [-n N]`: the gateway's log (`<home>/logs/gateway.log`,
 * pino JSON lines, secrets already masked when written) as readable lines, or the JSON lines
 * themselves. `--follow` keeps printing what the gateway writes until Ctrl-C, across a log that
 * is truncated or replaced (rotation).
 */
import { open, stat } from "node:fs/promises";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { logsDir } from "../../config/paths.js";
import type { CliContext } from "../context.js";
import type { Colors } from "../io.js";
import { processSignal } from "../stop-signal.js";
import type { StopSignal } from "../stop-signal.js";

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const LEVEL_NAMES = new Map(Object.entries(LEVELS).map(([name, n]) => [n, name]));
/** How often `--follow` looks for new lines. */
const FOLLOW_POLL_MS = 200;

interface LogsOptions {
  follow?: boolean;
  level?: string;
  json?: boolean;
  lines: number;
}

function parseLevel(value: string): string {
  const level = value.toLowerCase();
  if (!(level in LEVELS)) throw new InvalidArgumentError(`expected one of ${Object.keys(LEVELS).join(", ")}`);
  return level;
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number of lines");
  return n;
}

/** The gateway's log file for a home. */
export function gatewayLogFile(home: string): string {
  return `${logsDir(home)}/gateway.log`;
}

/** One log line for people: `time LEVEL message key=value …`; a line that is not JSON as it is. */
export function renderLogLine(line: string, c: Colors): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== "object" || parsed === null) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, pid: _pid, hostname: _host, ...rest } = entry;
  const name = (typeof level === "number" ? LEVEL_NAMES.get(level) : typeof level === "string" ? level : undefined) ?? "info";
  const when = typeof time === "number" ? new Date(time).toISOString() : typeof time === "string" ? time : "";
  const paint = name === "error" || name === "fatal" ? c.red : name === "warn" ? c.yellow : name === "info" ? c.green : c.dim;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`)
    .join(" ");
  return `${c.dim(when)} ${paint(name.toUpperCase().padEnd(5))} ${typeof msg === "string" ? msg : ""}${fields ? ` ${c.dim(fields)}` : ""}`;
}

/** A JSON line's numeric level (a non-JSON line passes every filter). */
function levelOf(line: string): number {
  const m = /"level":\s*(\d+|"[a-z]+")/.exec(line);
  if (!m) return Number.POSITIVE_INFINITY;
  const raw = m[1]!;
  return raw.startsWith('"') ? (LEVELS[raw.slice(1, -1)] ?? Number.POSITIVE_INFINITY) : Number(raw);
}

/** The first window `-n` reads from the end of a log; doubled until it holds enough lines. */
const TAIL_WINDOW_BYTES = 256 * 1024;

/** The complete lines of `file` in bytes [from, to); a partial last line waits for its newline. */
async function readLines(file: string, from: number, to: number): Promise<{ lines: string[]; next: number }> {
  if (to <= from) return { lines: [], next: from };
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(to - from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    const end = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (end < 0) return { lines: [], next: from };
    return { lines: buffer.subarray(0, end).toString("utf8").split("\n"), next: from + end + 1 };
  } finally {
    await handle.close();
  }
}

/** The last `count` lines that `keep` accepts, reading back from the end only as far as needed. */
async function tailLines(file: string, size: number, count: number, keep: (line: string) => boolean): Promise<{ lines: string[]; next: number }> {
  for (let window = TAIL_WINDOW_BYTES; ; window *= 2) {
    const from = Math.max(0, size - window);
    const { lines, next } = await readLines(file, from, size);
    // A window that starts mid-file starts mid-line: its first line is not whole.
    const kept = (from > 0 ? lines.slice(1) : lines).filter(keep);
    if (kept.length >= count || from === 0) return { lines: count === 0 ? [] : kept.slice(-count), next };
  }
}

async function fileSize(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch {
    return undefined;
  }
}

export function registerLogsCommand(program: Command, ctx: CliContext, waitForStop: StopSignal = processSignal): void {
  program
    .command("logs")
    .description("print the gateway's log (<home>/logs/gateway.log); -f follows it")
    .option("-f, --follow", "keep printing new lines until Ctrl-C")
    .option("--level <level>", "only lines at this level or above (trace, debug, info, warn, error)", parseLevel)
    .option("--json", "print the log's JSON lines as they are")
    .option("-n, --lines <n>", "how many of the last lines to print first", parseCount, 100)
    .action(async (opts: LogsOptions, cmd: Command) => {
      const loaded = await ctx.loadConfig(cmd);
      const file = gatewayLogFile(loaded.home);
      const min = opts.level ? LEVELS[opts.level]! : 0;
      const keep = (line: string): boolean => line.trim() !== "" && levelOf(line) >= min;
      const print = (lines: readonly string[]): void => {
        for (const line of lines) ctx.io.stdout.write(`${opts.json ? line : renderLogLine(line, ctx.colors.out)}\n`);
      };
      let offset = 0;
      const size = await fileSize(file);
      if (size === undefined) {
        if (!opts.follow) {
          ctx.io.stderr.write(`${ctx.colors.err.red("error:")} no gateway log at ${file} yet (start the gateway: nanobot gateway)\n`);
          ctx.exitCode = 1;
          return;
        }
        ctx.io.stderr.write(`waiting for ${file} (start the gateway: nanobot gateway)\n`);
      } else {
        const { lines, next } = await tailLines(file, size, opts.lines, keep);
        print(lines);
        offset = next;
      }
      if (!opts.follow) return;
      let stopping = false;
      const stopped = waitForStop().then(() => void (stopping = true));
      while (!stopping) {
        const now = await fileSize(file);
        // Truncated or replaced by a smaller file: start again from its beginning.
        if (now !== undefined && now < offset) offset = 0;
        if (now !== undefined && now > offset) {
          const { lines, next } = await readLines(file, offset, now);
          print(lines.filter(keep));
          offset = next;
        }
        await Promise.race([stopped, new Promise((r) => setTimeout(r, FOLLOW_POLL_MS))]);
      }
    });
}
