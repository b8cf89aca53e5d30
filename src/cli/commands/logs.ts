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

/** Reads the complete lines of `file` from byte `from`; a partial last line waits for its newline. */
async function readFrom(file: string, from: number): Promise<{ lines: string[]; next: number }> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    if (size <= from) return { lines: [], next: from };
    const buffer = Buffer.alloc(size - from);
    await handle.read(buffer, 0, buffer.length, from);
    const end = buffer.lastIndexOf(0x0a);
    if (end < 0) return { lines: [], next: from };
    return { lines: buffer.subarray(0, end).toString("utf8").split("\n"), next: from + end + 1 };
  } finally {
    await handle.close();
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
      const print = (lines: readonly string[]): void => {
        for (const line of lines) {
          if (line.trim() === "" || levelOf(line) < min) continue;
          ctx.io.stdout.write(`${opts.json ? line : renderLogLine(line, ctx.colors.out)}\n`);
        }
      };
      let offset = 0;
      if ((await fileSize(file)) === undefined) {
        if (!opts.follow) {
          ctx.io.stderr.write(`${ctx.colors.err.red("error:")} no gateway log at ${file} yet (start the gateway: nanobot gateway)\n`);
          ctx.exitCode = 1;
          return;
        }
        ctx.io.stderr.write(`waiting for ${file} (start the gateway: nanobot gateway)\n`);
      } else {
        const { lines, next } = await readFrom(file, 0);
        const kept = lines.filter((l) => l.trim() !== "" && levelOf(l) >= min);
        print(opts.lines === 0 ? [] : kept.slice(-opts.lines));
        offset = next;
      }
      if (!opts.follow) return;
      let stopping = false;
      const stopped = waitForStop().then(() => void (stopping = true));
      while (!stopping) {
        const size = await fileSize(file);
        // Truncated or replaced by a smaller file: start again from its beginning.
        if (size !== undefined && size < offset) offset = 0;
        if (size !== undefined && size > offset) {
          const { lines, next } = await readFrom(file, offset);
          print(lines);
          offset = next;
        }
        await Promise.race([stopped, new Promise((r) => setTimeout(r, FOLLOW_POLL_MS))]);
      }
    });
}
