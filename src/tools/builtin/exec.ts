/**
 * exec: runs a bash command in the workspace after the exec guard approved it. The command
 * gets its own process group so a timeout or an abort kills everything it started, and its
 * output streams into a head/tail buffer capped at 10,000 characters.
 */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { z } from "zod";
import type { Tool, ToolOutput } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { formatBlocked, type ExecGuard } from "./exec-guard.js";
import { HeadTailBuffer } from "./output-buffer.js";
import { fmt } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

export const EXEC_DEFAULT_TIMEOUT_S = 60;
export const EXEC_MAX_TIMEOUT_S = 600;
export const EXEC_OUTPUT_CAP = 10_000;
/** After bash exits, how long its output pipes may stay open (held by background children). */
const PIPE_GRACE_MS = 250;

export interface ExecToolOptions {
  guard: ExecGuard;
  workspaceGuard: WorkspaceGuard;
  /** Default timeout in seconds when the call gives none. */
  timeout?: number;
  outputCap?: number;
  shell?: string;
}

const schema = z.object({
  command: z.string().min(1).describe("The bash command to run."),
  timeout: z.number().int().min(1).max(EXEC_MAX_TIMEOUT_S).optional().describe(`Seconds before the command is killed (1-${EXEC_MAX_TIMEOUT_S}, default ${EXEC_DEFAULT_TIMEOUT_S}).`),
  working_dir: z.string().min(1).optional().describe("Directory to run in (default: the workspace)."),
});

interface RunOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  reason?: "timeout" | "aborted";
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}

/** Spawns bash in its own process group, streams output into `buffer`, settles when done. */
export function runShell(command: string, cwd: string, timeoutMs: number, buffer: HeadTailBuffer, signal: AbortSignal, shell = "bash"): Promise<RunOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(shell, ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: process.env });
    let reason: RunOutcome["reason"];
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const stop = (why: "timeout" | "aborted"): void => {
      reason ??= why;
      killGroup(child.pid);
    };
    const onAbort = (): void => stop("aborted");
    const timer = setTimeout(() => stop("timeout"), timeoutMs);
    signal.addEventListener("abort", onAbort, { once: true });
    const finish = (): void => {
      if (settled || !exit) return;
      settled = true;
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      signal.removeEventListener("abort", onAbort);
      resolve({ exitCode: exit.code, signal: exit.signal, ...(reason ? { reason } : {}) });
    };
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => buffer.push(chunk));
    child.stderr.on("data", (chunk: string) => buffer.push(chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (!settled) reject(error);
      settled = true;
    });
    child.on("exit", (code, sig) => {
      exit = { code, signal: sig };
      // Background children still holding our pipes would keep 'close' away forever:
      // give them a moment, then end the group so no orphan writes into a dead pipe.
      graceTimer = setTimeout(() => {
        killGroup(child.pid);
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, PIPE_GRACE_MS);
    });
    child.on("close", () => finish());
    if (signal.aborted) onAbort();
  });
}

function render(outcome: RunOutcome, buffer: HeadTailBuffer, timeoutS: number): ToolOutput {
  const output = buffer.totalChars > 0 ? buffer.toString() : "(no output)";
  if (outcome.reason === "timeout") {
    return errorResult(`${output}\n\nError: command timed out after ${timeoutS} s; it and every process it started were killed.`);
  }
  if (outcome.reason === "aborted") return errorResult(`${output}\n\nError: command aborted; it and every process it started were killed.`);
  const status = outcome.exitCode !== null ? `Exit code: ${outcome.exitCode}` : `Killed by signal ${outcome.signal ?? "unknown"}`;
  return `${output}\n\n${status}`;
}

export function createExecTool(options: ExecToolOptions): Tool {
  const cap = options.outputCap ?? EXEC_OUTPUT_CAP;
  const defaultTimeout = Math.min(Math.max(options.timeout ?? EXEC_DEFAULT_TIMEOUT_S, 1), EXEC_MAX_TIMEOUT_S);
  return defineTool({
    name: "exec",
    description:
      `Run a bash command in the workspace and return its combined stdout/stderr and exit code. ` +
      `Timeout ${defaultTimeout} s by default (timeout: 1-${EXEC_MAX_TIMEOUT_S}); on timeout the command and all its ` +
      `child processes are killed. Output over ${fmt(cap)} characters keeps the head and the tail. ` +
      `Destructive commands (rm -rf, mkfs, dd, shutdown, …), writes to memory files and requests to ` +
      `private/loopback/metadata addresses are refused. Prefer read_file/grep/edit_file for files. ` +
      `Background processes must redirect their output (nohup cmd > log 2>&1 &) to outlive the call.`,
    schema,
    exclusive: true,
    // The call enforces its own timeout; the engine's limit must not cut it short.
    timeoutMs: (EXEC_MAX_TIMEOUT_S + 10) * 1000,
    async run(args, ctx, signal) {
      const verdict = options.guard.check(args.command, ctx.workspace);
      if (!verdict.ok) return errorResult(formatBlocked(verdict));
      let cwd = options.workspaceGuard.baseDir(ctx.workspace);
      if (args.working_dir) {
        const checked = await options.workspaceGuard.check(args.working_dir, ctx);
        if (!checked.ok) return errorResult(checked.error);
        cwd = checked.path;
      }
      if (!(await stat(cwd).catch(() => undefined))?.isDirectory()) return errorResult(`Error: working directory does not exist: ${cwd}`);
      const timeoutS = args.timeout ?? defaultTimeout;
      const buffer = new HeadTailBuffer(cap);
      try {
        const outcome = await runShell(args.command, cwd, timeoutS * 1000, buffer, signal, options.shell);
        return render(outcome, buffer, timeoutS);
      } catch (error) {
        return errorResult(`Error: could not start the command: ${(error as Error).message}`);
      }
    },
  });
}
