/**
 * Decides whether a shell command may run, before it runs. Filters in order: syntax (what we
 * cannot parse we do not run), deny (built-in rules + user denyPatterns), allow (a real bash
 * parse: plain commands only, each fully matching an allowPattern; async, in `verify`),
 * workspace (cd and paths outside it, when restricted) and network (URLs or hosts that are
 * private, loopback, link-local or metadata). A text filter is a friendly early refusal, not a
 * boundary: the sandbox (sandbox-bwrap.ts) is.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { ConfigError } from "../../core/errors.js";
import { checkAllowPatterns } from "./exec-allow.js";
import { DEFAULT_PROTECTED_PATHS, denyRaw, denySegment, nestedCommand } from "./exec-deny-rules.js";
import { commandName, commandWords, parseShell, type ShellSegment } from "./shell-split.js";
import type { SsrfGuard } from "./ssrf-guard.js";
import { expandHome, type WorkspaceGuard } from "./workspace-guard.js";

export type ExecFilter = "syntax" | "deny" | "allow" | "workspace" | "network";

export type ExecVerdict = { ok: true } | { ok: false; filter: ExecFilter; reason: string };

export interface ExecGuardOptions {
  workspaceGuard: WorkspaceGuard;
  ssrf: SsrfGuard;
  /** Extra regexes (JavaScript syntax) that block a command when they match anywhere. */
  denyPatterns?: readonly string[];
  /** When non-empty, every simple command must be plain and fully match one of these regexes. */
  allowPatterns?: readonly string[];
  protectedPaths?: readonly string[];
  home?: string;
}

/** Device files every shell script uses harmlessly. */
const HARMLESS_PATHS = /^\/dev\/(null|zero|stdin|stdout|stderr|tty|urandom|random|fd\/\d+)$/;
const NET_COMMANDS = new Set(["curl", "wget", "nc", "ncat", "netcat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "http", "https", "xh", "aria2c", "lynx", "links", "w3m", "socat", "ping", "nmap"]);
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>|;&)(]+/gi;
const MAX_NESTING = 4;
const DEV_TCP = /\/dev\/(?:tcp|udp)\/([^/\s'"]+)/g;
const ATTACHED_HOST = /^(?:-x|--proxy=|--preproxy=|--socks[45]h?=|--connect-to=[^:]*:[^:]*:)(.+)$/;

export function formatBlocked(verdict: Extract<ExecVerdict, { ok: false }>): string {
  return `Command blocked by ${verdict.filter} filter: ${verdict.reason}`;
}

function compile(patterns: readonly string[], key: string, anchored: boolean): RegExp[] {
  return patterns.map((pattern, i) => {
    try {
      return new RegExp(anchored ? `^(?:${pattern})$` : pattern, anchored ? "s" : "");
    } catch (error) {
      throw new ConfigError(`Invalid regular expression in ${key}: ${(error as Error).message}`, { path: `${key}[${i}]`, expected: "a JavaScript regular expression" });
    }
  });
}

/** The segment with quotes removed, as bash will see it: what patterns are also tried on. */
function normalized(segment: ShellSegment): string {
  return [...segment.words, ...segment.redirects.map((r) => `${r.op}${r.target}`)].join(" ");
}

export class ExecGuard {
  private readonly deny: RegExp[];
  private readonly allow: RegExp[];
  private readonly protectedPaths: readonly string[];
  private readonly home: string;

  constructor(private readonly options: ExecGuardOptions) {
    this.deny = compile(options.denyPatterns ?? [], "tools.exec.denyPatterns", false);
    this.allow = compile(options.allowPatterns ?? [], "tools.exec.allowPatterns", true);
    this.protectedPaths = options.protectedPaths ?? DEFAULT_PROTECTED_PATHS;
    this.home = options.home ?? homedir();
  }

  /** The text filters (syntax, deny, workspace, network); `verify` adds allowPatterns. */
  check(command: string, workspace?: string): ExecVerdict {
    return this.checkText(command, workspace, 0);
  }

  /**
   * Every filter, in order: syntax, deny, allow (on a real bash parse, see exec-allow.ts),
   * workspace, network. What exec runs.
   */
  async verify(command: string, workspace?: string): Promise<ExecVerdict> {
    const verdict = this.check(command, workspace);
    if (!verdict.ok && (verdict.filter === "syntax" || verdict.filter === "deny")) return verdict;
    const allowed = await checkAllowPatterns(command, this.allow);
    return allowed.ok ? verdict : allowed;
  }

  private checkText(command: string, workspace: string | undefined, nesting: number): ExecVerdict {
    if (nesting > MAX_NESTING) return { ok: false, filter: "syntax", reason: "too many nested shells" };
    const parsed = parseShell(command);
    if (parsed.error) return { ok: false, filter: "syntax", reason: `${parsed.error}; the command cannot be checked` };
    const raw = denyRaw(command);
    if (raw) return { ok: false, filter: "deny", reason: raw.reason };
    for (const segment of parsed.segments) {
      const hit = denySegment(segment, this.protectedPaths);
      if (hit) return { ok: false, filter: "deny", reason: `${hit.reason} (${segment.text})` };
      const user = this.deny.find((re) => re.test(command) || re.test(segment.text) || re.test(normalized(segment)));
      if (user) return { ok: false, filter: "deny", reason: `matches deny pattern ${user.source} (${segment.text})` };
    }
    if (this.options.workspaceGuard.restrictToWorkspace) {
      const escape = this.workspaceEscape(parsed.segments, workspace);
      if (escape) return { ok: false, filter: "workspace", reason: escape };
    }
    const network = this.networkTarget(command, parsed.segments);
    if (network) return { ok: false, filter: "network", reason: network };
    // The strings given to `bash -c` / `eval` are commands too.
    for (const segment of parsed.segments) {
      const nested = nestedCommand(segment);
      if (nested === undefined) continue;
      const verdict = this.checkText(nested, workspace, nesting + 1);
      if (!verdict.ok) return verdict;
    }
    return { ok: true };
  }

  private outside(candidate: string, cwd: string, workspace: string | undefined): string | undefined {
    const { allowed, resolved } = this.options.workspaceGuard.isAllowedSync(expandHome(candidate, this.home), workspace, cwd);
    return allowed ? undefined : resolved;
  }

  /** cd targets and path-like words that leave the workspace, following cd across segments. */
  private workspaceEscape(segments: readonly ShellSegment[], workspace: string | undefined): string | undefined {
    const guard = this.options.workspaceGuard;
    let cwd = guard.baseDir(workspace);
    for (const segment of segments) {
      const words = commandWords(segment.words);
      const name = commandName(segment.words);
      if (name === "cd" || name === "pushd") {
        const target = (words.slice(1).find((w) => !w.startsWith("-")) ?? "~").replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, "~");
        const resolved = this.outside(target, cwd, workspace);
        if (resolved) return `cd ${target} leaves the workspace (${resolved})`;
        if (segment.depth === 0) cwd = path.resolve(cwd, expandHome(target, this.home));
        continue;
      }
      const candidates = [...words.slice(1), ...segment.redirects.map((r) => r.target)];
      for (const word of candidates) {
        for (const raw of [word, ...word.split("=").slice(1)]) {
          // $HOME is the one variable whose value we know to point outside.
          const part = raw.replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, "~");
          if (part.includes("://") || /\s/.test(part) || HARMLESS_PATHS.test(part)) continue;
          if (/^~[^/]/.test(part)) return `path ${raw} (another user's home) is outside the workspace`;
          const pathLike = part.startsWith("/") || part === "~" || part.startsWith("~/") || /(^|\/)\.\.(\/|$)/.test(part);
          // A relative path can still leave through a symlink inside the workspace (door/secret).
          const relativeExisting = !pathLike && part !== "" && !part.startsWith("-") && (part.includes("/") || existsSync(path.resolve(cwd, part)));
          if (!pathLike && !relativeExisting) continue;
          const resolved = this.outside(part, cwd, workspace);
          if (resolved) return `path ${part} is outside the workspace (${resolved})`;
        }
      }
    }
    return undefined;
  }

  /** URLs anywhere in the text, and bare hosts given to network commands. */
  private networkTarget(command: string, segments: readonly ShellSegment[]): string | undefined {
    const ssrf = this.options.ssrf;
    const texts = [command, ...segments.map(normalized)];
    for (const text of texts) {
      for (const match of text.matchAll(URL_IN_TEXT)) {
        let host: string;
        try {
          host = new URL(match[0]).hostname;
        } catch {
          continue;
        }
        const reason = ssrf.checkHostLiteral(host);
        if (reason) return `${match[0]} targets a blocked address: ${reason}`;
      }
    }
    // bash's /dev/tcp/HOST/PORT pseudo-files open a socket with no network command at all.
    for (const text of texts) {
      for (const match of text.matchAll(DEV_TCP)) {
        const reason = ssrf.checkHostLiteral(match[1] ?? "");
        if (reason) return `${match[0]} targets a blocked address: ${reason}`;
      }
    }
    for (const segment of segments) {
      if (!NET_COMMANDS.has(commandName(segment.words))) continue;
      for (const raw of commandWords(segment.words).slice(1)) {
        // An option glued to its host (curl -x127.0.0.1:8080, --proxy=10.0.0.1) names a host too.
        const word = ATTACHED_HOST.exec(raw)?.[1] ?? raw;
        if (word.startsWith("-") || word.includes("://")) continue;
        // `0` (0.0.0.0, reaches the loopback) is a host before a port, unlike a bare count.
        if (/^0+:\d+$/.test(word)) return `${word} targets a blocked address: 0.0.0.0 reaches this machine`;
        const host = hostOf(word);
        // Small numbers are option values (`-c 1`, `-m 5`), not hosts written as integers.
        if (!host || /^\d{1,7}$/.test(host)) continue;
        const reason = ssrf.checkHostLiteral(host);
        if (reason) return `${word} targets a blocked address: ${reason}`;
      }
    }
    return undefined;
  }
}

/** `user@host:port/path`, `[::1]:80`, `10.0.0.1` → the host part. */
function hostOf(word: string): string | undefined {
  const noUser = word.includes("@") ? word.slice(word.lastIndexOf("@") + 1) : word;
  const bracket = /^\[([^\]]+)\]/.exec(noUser);
  if (bracket) return bracket[1];
  const host = noUser.split("/")[0] ?? "";
  // Bare IPv6 has several colons; host:port has one.
  if ((host.match(/:/g) ?? []).length > 1) return host;
  return host.split(":")[0];
}
