/**
 * exec: runs a bash command in the workspace after the exec guard approved it, inside the
 * bubblewrap sandbox when there is one (sandbox-bwrap.ts), always with a cleared environment
 * (exec-env.ts) and resource limits. The command gets its own process group (and, sandboxed,
 * its own PID namespace) so a timeout or an abort kills everything it started, and its output
 * streams into a head/tail buffer capped at 10,000 characters.
 */
import { spawn } from "node:child_process";
import { mkdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Tool, ToolOutput } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { execEnv, pathDirs } from "./exec-env.js";
import { formatBlocked, type ExecGuard } from "./exec-guard.js";
import { HeadTailBuffer } from "./output-buffer.js";
import { bwrapArgs, sandboxConflict } from "./sandbox-bwrap.js";
import { resolveSandbox, type SandboxSetting, type SandboxState } from "./sandbox-mode.js";
import { fmt } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

export const EXEC_DEFAULT_TIMEOUT_S = 60;
export const EXEC_MAX_TIMEOUT_S = 600;
export const EXEC_OUTPUT_CAP = 10_000;
/** After bash exits, how long its output pipes may stay open (held by background children). */
const PIPE_GRACE_MS = 250;
/** setTimeout's ceiling (about 24.8 days): the engine's limit for a command without one. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ExecToolOptions {
  guard: ExecGuard;
  workspaceGuard: WorkspaceGuard;
  /**
   * Default timeout in seconds when the call gives none (`tools.exec.timeout`, as in the Python
   * nanobot): 0 = no limit; not capped at EXEC_MAX_TIMEOUT_S, which bounds only the model's own.
   */
  timeout?: number;
  outputCap?: number;
  shell?: string;
  /** `tools.exec.sandbox` (default "auto"). */
  sandbox?: SandboxSetting;
  /** `tools.exec.network`: the sandbox keeps the network namespace (default false). */
  network?: boolean;
  /** `tools.exec.allowedEnvKeys`: variables passed on besides PATH, HOME, LANG, TERM. */
  allowedEnvKeys?: readonly string[];
  /** `tools.exec.pathAppend`: appended to PATH. */
  pathAppend?: string;
  /** `tools.exec.pathPrepend`: put before PATH. */
  pathPrepend?: string;
  /** `$NANOBOT_HOME` and the config file: never visible to a sandboxed command. */
  nanobotHome?: string;
  configPath?: string;
  /** The environment commands draw from (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Resource limits set (hard) before the command starts, lowered only: processes per user (high
 * enough for parallel builds; RLIMIT_NPROC counts all of the user's processes), file size
 * 2 GiB (bash counts 1 KiB blocks), CPU seconds per process (4 × the call's timeout), no core
 * files. `$0` carries the command so the wrapper's variables never reach it.
 */
export const EXEC_LIMITS = { processes: 8192, fileSizeBlocks: 2 * 1024 * 1024, cpuPerTimeout: 4 } as const;

function wrapperScript(shell: string, timeoutS: number): string {
  // No timeout (0): no CPU-time limit either.
  const cpu = timeoutS > 0 ? `  t ${timeoutS * EXEC_LIMITS.cpuPerTimeout}` : "";
  const limits = `u ${EXEC_LIMITS.processes}  f ${EXEC_LIMITS.fileSizeBlocks}${cpu}  c 0`;
  return (
    `set -- ${limits}; while [ $# -gt 0 ]; do h=$(ulimit -H -$1); ` +
    `if [ "$h" = unlimited ] || [ "$h" -gt "$2" ]; then ulimit -H -S -$1 "$2" || exit 126; fi; shift 2; done; ` +
    `unset h; exec ${shell} -c "$0"`
  );
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

export interface SpawnSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Spawns the command in its own process group, streams output into `buffer`, settles when done (timeoutMs 0: no limit). */
export function runShell(spec: SpawnSpec, timeoutMs: number, buffer: HeadTailBuffer, signal: AbortSignal): Promise<RunOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(spec.file, spec.args, { cwd: spec.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: spec.env });
    let reason: RunOutcome["reason"];
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const stop = (why: "timeout" | "aborted"): void => {
      reason ??= why;
      killGroup(child.pid);
    };
    const onAbort = (): void => stop("aborted");
    const timer = timeoutMs > 0 ? setTimeout(() => stop("timeout"), timeoutMs) : undefined;
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

function sandboxSentence(state: SandboxState, options: ExecToolOptions): string {
  const env = ["PATH", "HOME", "LANG", "TERM", ...(options.allowedEnvKeys ?? [])].join(", ");
  if (state.kind === "bwrap") {
    return (
      `Runs in a bubblewrap sandbox: the workspace is the only writable folder (memory/ is read-only), system folders are ` +
      `read-only, /tmp and $HOME are empty and private, there are no devices and ${options.network ? "the network is on" : "no network"}; ` +
      `the environment holds only ${env}. Background processes end with the call.`
    );
  }
  if (state.refuse) return `Unavailable here: ${state.refuse}`;
  return (
    `No sandbox (${state.reason}): commands run with your full file access; destructive commands, writes to memory ` +
    `files and private/loopback/metadata addresses are refused by a best-effort deny list. The environment holds only ${env}. ` +
    `Background processes must redirect their output (nohup cmd > log 2>&1 &) to outlive the call.`
  );
}

export function createExecTool(options: ExecToolOptions): Tool {
  const cap = options.outputCap ?? EXEC_OUTPUT_CAP;
  const defaultTimeout = Math.max(Math.floor(options.timeout ?? EXEC_DEFAULT_TIMEOUT_S), 0);
  const sourceEnv = options.env ?? process.env;
  const shell = options.shell ?? "bash";
  const state = resolveSandbox({
    ...(options.sandbox ? { setting: options.sandbox } : {}),
    restrictToWorkspace: options.workspaceGuard.restrictToWorkspace,
    ...(sourceEnv.PATH !== undefined ? { pathVar: sourceEnv.PATH } : {}),
  });
  const env = execEnv(sourceEnv, { ...(options.allowedEnvKeys ? { allowedEnvKeys: options.allowedEnvKeys } : {}), ...(options.pathAppend ? { pathAppend: options.pathAppend } : {}), ...(options.pathPrepend ? { pathPrepend: options.pathPrepend } : {}) });

  /** The process to spawn for one call, or why the call must not run. */
  async function spawnSpec(command: string, workspace: string, cwd: string, timeoutS: number): Promise<SpawnSpec | string> {
    const inner = ["-c", wrapperScript(shell, timeoutS), command];
    if (state.kind === "none") return state.refuse ?? { file: shell, args: inner, cwd, env };
    // Real paths: bwrap mounts at the path given, and a symlinked component would not exist inside.
    const ws = await realpath(workspace);
    cwd = await realpath(cwd);
    const rel = path.relative(ws, cwd);
    if (rel.startsWith("..") || path.isAbsolute(rel)) return `working directory ${cwd} is outside the workspace; the sandbox shows only the workspace (${ws}).`;
    const conflict = sandboxConflict(ws, options.nanobotHome);
    if (conflict) return `exec is disabled: ${conflict}.`;
    // memory/ must exist to be mounted read-only; otherwise a command could create it.
    await mkdir(path.join(ws, "memory"), { recursive: true });
    const args = bwrapArgs({
      workspace: ws,
      cwd,
      network: options.network ?? false,
      pathDirs: pathDirs(env.PATH),
      ...(env.HOME ? { home: env.HOME } : {}),
      ...(options.nanobotHome ? { nanobotHome: options.nanobotHome } : {}),
      ...(options.configPath ? { configPath: options.configPath } : {}),
    });
    return { file: state.bwrap, args: [...args, "--", shell, ...inner], cwd, env };
  }

  return defineTool({
    name: "exec",
    description:
      `Run a bash command in the workspace and return its combined stdout/stderr and exit code. ` +
      `${defaultTimeout > 0 ? `Timeout ${defaultTimeout} s by default` : "No time limit by default"} (timeout: 1-${EXEC_MAX_TIMEOUT_S}); on timeout the command and all its ` +
      `child processes are killed. Output over ${fmt(cap)} characters keeps the head and the tail. ` +
      `${sandboxSentence(state, options)} Prefer read_file/grep/edit_file for files.`,
    schema,
    exclusive: true,
    // The call enforces its own timeout; the engine's limit must not cut it short (none: the longest a timer allows).
    timeoutMs: defaultTimeout === 0 ? MAX_TIMER_MS : (Math.max(EXEC_MAX_TIMEOUT_S, defaultTimeout) + 10) * 1000,
    async run(args, ctx, signal) {
      const verdict = await options.guard.verify(args.command, ctx.workspace);
      if (!verdict.ok) return errorResult(formatBlocked(verdict));
      if (state.kind === "none" && state.refuse) return errorResult(`Error: ${state.refuse}`);
      const workspace = options.workspaceGuard.baseDir(ctx.workspace);
      let cwd = workspace;
      if (args.working_dir) {
        const checked = await options.workspaceGuard.check(args.working_dir, ctx);
        if (!checked.ok) return errorResult(checked.error);
        cwd = checked.path;
      }
      if (!(await stat(cwd).catch(() => undefined))?.isDirectory()) return errorResult(`Error: working directory does not exist: ${cwd}`);
      const timeoutS = args.timeout ?? defaultTimeout;
      const buffer = new HeadTailBuffer(cap);
      try {
        const spec = await spawnSpec(args.command, workspace, cwd, timeoutS);
        if (typeof spec === "string") return errorResult(`Error: ${spec}`);
        const outcome = await runShell(spec, timeoutS * 1000, buffer, signal);
        return render(outcome, buffer, timeoutS);
      } catch (error) {
        return errorResult(`Error: could not start the command: ${(error as Error).message}`);
      }
    },
  });
}
