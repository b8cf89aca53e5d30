/**
 * Keeps file-tool paths inside the workspace (`tools.restrictToWorkspace`). Paths are resolved
 * the way the OS will resolve them: `~` expanded, relative to the workspace, and every symlink
 * followed (dangling ones too), so a link pointing outside cannot be used as a door. The tools
 * then open through `fs-safe-open`, which checks the opened descriptor itself, so a swap after
 * this check cannot escape either. Repeated attempts on the same target in one turn get a
 * firmer answer.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { DEFAULT_PROTECTED_PATHS, protectedMatch, protectedMessage } from "./fs-protected.js";
import { LinkLoopError, resolvePath } from "./fs-resolve.js";
import {
  isInside,
  openDirChecked,
  openReadChecked,
  openWriteChecked,
  PathChangedError,
  PathEscapeError,
  type OpenedDir,
  type OpenedFile,
  type OpenedForWrite,
  type Roots,
} from "./fs-safe-open.js";

export interface WorkspaceGuardOptions {
  workspace: string;
  restrictToWorkspace: boolean;
  /** Additional directories the tools may touch (resolved like the workspace). */
  extraRoots?: string[];
  /** Home directory for `~` expansion (defaults to `os.homedir()`). */
  home?: string;
  /** Workspace-relative files no tool may write (default: `memory/history.jsonl`). */
  protectedPaths?: readonly string[];
}

export type PathCheck = { ok: true; path: string } | { ok: false; error: string };
/** An open result: the value, or an error text ready for the model. */
export type Opened<T> = ({ ok: true } & T) | { ok: false; error: string };
type CallCtx = { workspace?: string; turnId?: string; sessionKey?: string };

/** A violation count per turn is enough; old turns are forgotten beyond this many. */
const MAX_TRACKED_TURNS = 64;
/** From this attempt on, the refusal tells the model to stop trying. */
const ESCALATE_AT = 3;

export function expandHome(input: string, home: string): string {
  if (input === "~") return home;
  if (input.startsWith("~/")) return path.join(home, input.slice(2));
  return input;
}

/** realpath of the nearest existing ancestor, with the missing tail appended. */
function realpathLenientSync(target: string): string {
  let existing = target;
  const tail: string[] = [];
  while (!existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    tail.unshift(path.basename(existing));
    existing = parent;
  }
  let real = existing;
  try {
    real = realpathSync(existing);
  } catch {
    // A dangling symlink or a permission problem: keep the lexical path.
  }
  return path.join(real, ...tail);
}


export class WorkspaceGuard {
  readonly restrictToWorkspace: boolean;
  private readonly workspace: string;
  private readonly extraRoots: string[];
  private readonly home: string;
  private readonly protectedPaths: readonly string[];
  private readonly violations = new Map<string, Map<string, number>>();

  constructor(options: WorkspaceGuardOptions) {
    this.restrictToWorkspace = options.restrictToWorkspace;
    this.home = options.home ?? homedir();
    this.workspace = path.resolve(expandHome(options.workspace, this.home));
    this.extraRoots = (options.extraRoots ?? []).map((root) => path.resolve(expandHome(root, this.home)));
    this.protectedPaths = options.protectedPaths ?? DEFAULT_PROTECTED_PATHS;
  }

  /** The workspace a call runs in: the context's when given, else the configured one. */
  baseDir(ctxWorkspace?: string): string {
    return ctxWorkspace ? path.resolve(expandHome(ctxWorkspace, this.home)) : this.workspace;
  }

  /** Lexical resolution: `~` expanded, relative paths joined to the workspace. */
  absolute(input: string, ctxWorkspace?: string): string {
    return path.resolve(this.baseDir(ctxWorkspace), expandHome(input.trim(), this.home));
  }

  /** Real (symlink-resolved) roots that paths must stay inside. */
  rootsSync(ctxWorkspace?: string): string[] {
    return [this.baseDir(ctxWorkspace), ...this.extraRoots].map(realpathLenientSync);
  }

  /**
   * A directory argument: checked like any path, then required to exist and be a directory.
   * `fileHint` is appended when the path is a file (what to use instead).
   */
  async checkDirectory(input: string, ctx: { workspace?: string; turnId?: string; sessionKey?: string }, fileHint = ""): Promise<PathCheck> {
    const checked = await this.check(input, ctx);
    if (!checked.ok) return checked;
    const info = await stat(checked.path).catch(() => undefined);
    if (!info) return { ok: false, error: `Error: directory not found: ${input}` };
    if (!info.isDirectory()) return { ok: false, error: `Error: ${input} is not a directory.${fileHint ? ` ${fileHint}` : ""}` };
    return checked;
  }

  /**
   * Resolves (every link followed, dangling ones too) and checks a path argument; the error
   * text is ready for the model. A check alone does not stop a swap afterwards: tools open
   * through openRead/openWrite/dirOpener, which check the opened descriptor as well.
   */
  async check(input: string, ctx: CallCtx): Promise<PathCheck> {
    const lexical = this.absolute(input, ctx.workspace);
    let real: string;
    try {
      real = await resolvePath(lexical);
    } catch (error) {
      if (error instanceof LinkLoopError) return { ok: false, error: `Error: ${input}: ${error.message}.` };
      throw error;
    }
    if (!this.restrictToWorkspace) return { ok: true, path: real };
    const roots = this.rootsSync(ctx.workspace);
    if (roots.some((root) => isInside(real, root))) return { ok: true, path: real };
    return { ok: false, error: this.violation(input, real, roots, ctx) };
  }

  /** The roots an opened descriptor must lie in; undefined when access is unrestricted. */
  confinement(ctxWorkspace?: string): Roots {
    return this.restrictToWorkspace ? this.rootsSync(ctxWorkspace) : undefined;
  }

  /** Resolves, checks and opens a file for reading; the descriptor itself is checked too. */
  async openRead(input: string, ctx: CallCtx): Promise<Opened<OpenedFile>> {
    const checked = await this.check(input, ctx);
    if (!checked.ok) return checked;
    return this.opening(input, ctx, `Error: file not found: ${input}`, async () => ({ ok: true, ...(await openReadChecked(checked.path, this.confinement(ctx.workspace))) }));
  }

  /**
   * Resolves, checks and opens a file for writing, refusing protected files (by path before
   * opening, by inode after). Nothing is truncated here; `create` makes missing directories.
   */
  async openWrite(input: string, ctx: CallCtx, options: { create: boolean; read?: boolean }, notFound = `Error: file not found: ${input}`): Promise<Opened<OpenedForWrite>> {
    const checked = await this.check(input, ctx);
    if (!checked.ok) return checked;
    let realRoot = realpathLenientSync(this.baseDir(ctx.workspace));
    const before = await protectedMatch(realRoot, this.protectedPaths, checked.path);
    if (before) return { ok: false, error: protectedMessage(input, before) };
    if (options.create && this.restrictToWorkspace && !existsSync(realRoot) && isInside(checked.path, realRoot)) {
      // Directories are created only below a checked directory, so a workspace that does not
      // exist yet is made first (its parent lies outside the roots and could not be checked).
      await mkdir(realRoot, { recursive: true });
      realRoot = realpathLenientSync(this.baseDir(ctx.workspace));
    }
    return this.opening(input, ctx, notFound, async () => {
      const opened = await openWriteChecked(checked.path, this.confinement(ctx.workspace), options);
      const after = await protectedMatch(realRoot, this.protectedPaths, opened.real, opened.stats);
      if (after) {
        await opened.handle.close();
        return { ok: false, error: protectedMessage(input, after) };
      }
      return { ok: true, ...opened };
    });
  }

  /**
   * A directory opener for walks (each directory read through its checked descriptor). The
   * roots are worked out once per call, not once per directory.
   */
  dirOpener(ctxWorkspace?: string): (resolved: string) => Promise<OpenedDir> {
    const roots = this.confinement(ctxWorkspace);
    return (resolved) => openDirChecked(resolved, roots);
  }

  /** Turns the open errors a model can act on into messages; anything else is a real failure. */
  private async opening<T>(input: string, ctx: CallCtx, notFound: string, run: () => Promise<Opened<T>>): Promise<Opened<T>> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof PathEscapeError) return { ok: false, error: this.violation(input, error.real, this.rootsSync(ctx.workspace), ctx) };
      if (error instanceof PathChangedError) return { ok: false, error: `Error: ${input} changed while it was being opened (a symbolic link appeared); nothing was read or written.` };
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { ok: false, error: notFound };
      if (code === "EISDIR") return { ok: false, error: `Error: ${input} is a directory.` };
      if (code === "ENOTDIR") return { ok: false, error: `Error: ${input}: a part of the path is not a directory.` };
      if (code === "ENXIO") return { ok: false, error: `Error: ${input} is not a regular file (a FIFO, socket or device).` };
      if (code === "EACCES" || code === "EPERM") return { ok: false, error: `Error: permission denied: ${input}` };
      throw error;
    }
  }

  /** Synchronous check for command strings (exec guard); no violation counting side effects. */
  isAllowedSync(input: string, ctxWorkspace?: string, cwd?: string): { allowed: boolean; resolved: string } {
    const base = cwd ?? this.baseDir(ctxWorkspace);
    const real = realpathLenientSync(path.resolve(base, expandHome(input, this.home)));
    if (!this.restrictToWorkspace) return { allowed: true, resolved: real };
    return { allowed: this.rootsSync(ctxWorkspace).some((root) => isInside(real, root)), resolved: real };
  }

  /** Records a violation and returns the message, firmer from the third attempt on. */
  violation(
    input: string,
    resolved: string,
    roots: string[],
    ctx: { turnId?: string; sessionKey?: string },
  ): string {
    const count = this.countViolation(ctx.turnId ?? ctx.sessionKey ?? "default", resolved);
    const where = roots.length > 1 ? `the workspace (${roots[0]}) or the allowed roots (${roots.slice(1).join(", ")})` : `the workspace (${roots[0]})`;
    const base = `Error: access denied: '${input}' resolves to ${resolved}, which is outside ${where}.`;
    if (count < ESCALATE_AT) return `${base} Use paths inside the workspace.`;
    return (
      `${base} This is attempt ${count} on this path in this turn. Access outside the workspace is not ` +
      `permitted and retrying with another spelling (.., ~, symlinks, absolute paths) will not work. ` +
      `Stop trying to reach this path; continue with files inside the workspace or ask the user.`
    );
  }

  private countViolation(turnKey: string, target: string): number {
    let perTurn = this.violations.get(turnKey);
    if (!perTurn) {
      if (this.violations.size >= MAX_TRACKED_TURNS) {
        const oldest = this.violations.keys().next().value;
        if (oldest !== undefined) this.violations.delete(oldest);
      }
      perTurn = new Map();
      this.violations.set(turnKey, perTurn);
    }
    const count = (perTurn.get(target) ?? 0) + 1;
    perTurn.set(target, count);
    return count;
  }
}
