/**
 * The bubblewrap sandbox for `exec`: which folders a command sees and how, built as bwrap
 * arguments. The boundary is the mount namespace, not a filter: only system folders (read-only),
 * the workspace (read-write, `memory/` read-only) and the PATH folders outside them (read-only)
 * exist; `$HOME` and `/tmp` are empty private tmpfs; the nanobot home (config, `state.db`,
 * secrets) is covered wherever it would otherwise show; `/dev` is bwrap's minimal set (null,
 * zero, full, random, urandom, tty, pts, shm: no disks, no /dev/mem, no /dev/kmsg); the command
 * gets its own PID, IPC, UTS and (unless `network`) network namespace, no capabilities, a new
 * session (no TIOCSTI into our terminal), and dies with us.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { readProbeVerdict, writeProbeVerdict } from "./sandbox-probe-cache.js";

/** System folders bound read-only when they exist (symlinks such as /bin → usr/bin included). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
/** Readable by root inside the sandbox (uid 0 stays uid 0): covered with an empty file or tmpfs. */
const SYSTEM_SECRETS = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/security/opasswd",
  "/etc/ssh",
  "/etc/ssl/private",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/etc/letsencrypt",
  "/etc/wireguard",
  "/etc/NetworkManager/system-connections",
  "/etc/ipsec.secrets",
  "/etc/krb5.keytab",
];
/** Where resolv.conf often points (systemd-resolved): only bound when the network is on. */
const RESOLVER_DIRS = ["/run/systemd/resolve", "/run/resolvconf"];
/** Namespaces and hardening every run uses; detection tries the same set. */
const ISOLATION = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];

export interface SandboxPlan {
  workspace: string;
  /** Where the command starts (inside the workspace). */
  cwd: string;
  /** `$NANOBOT_HOME`: never visible. */
  nanobotHome?: string;
  /** The config file, when it lives outside the nanobot home: never visible. */
  configPath?: string;
  /** The command's `$HOME`: an empty private tmpfs inside. */
  home?: string;
  /** PATH folders outside the system folders (e.g. ~/.nvm/.../bin): bound read-only. */
  pathDirs?: readonly string[];
  network: boolean;
}

export interface SandboxStatus {
  available: boolean;
  /** Why not, in one line (missing, or bwrap's own error). */
  reason?: string;
  bwrap?: string;
}

const detected = new Map<string, SandboxStatus>();

function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const PROBE_ARGS = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", ...ISOLATION, "true"];
const PROBE_TIMEOUT_MS = 10_000;

export interface ProbeOptions {
  /**
   * Where the verdict is kept between starts (`<home>/cache/sandbox-probe.json`, see
   * sandbox-probe-cache.ts): `detectBwrap` always probes and writes it, `probeBwrap` uses it
   * while it holds.
   */
  cacheFile?: string;
}

function cacheOptions(file: string): { file: string; probe: string } {
  return { file, probe: PROBE_ARGS.join(" ") };
}

function probeVerdict(bwrap: string, status: number | null, stderr: string, error: Error | undefined): SandboxStatus {
  return status === 0
    ? { available: true, bwrap }
    : { available: false, bwrap, reason: `bwrap cannot create a sandbox here: ${(stderr || error?.message || `exit ${status}`).trim().split("\n")[0]}` };
}

/**
 * Whether bwrap can actually build a sandbox here, tried once per process (cached): being on
 * PATH is not enough (no user namespaces, a seccomp profile, a container without privileges).
 */
export function detectBwrap(pathVar: string | undefined = process.env.PATH, options: ProbeOptions = {}): SandboxStatus {
  const key = pathVar ?? "";
  const cached = detected.get(key);
  if (cached) return cached;
  const bwrap = findOnPath("bwrap", pathVar);
  let status: SandboxStatus;
  if (!bwrap) {
    status = { available: false, reason: "bubblewrap (bwrap) is not installed" };
  } else {
    const probe = spawnSync(bwrap, PROBE_ARGS, { stdio: ["ignore", "ignore", "pipe"], timeout: PROBE_TIMEOUT_MS, encoding: "utf8" });
    status = probeVerdict(bwrap, probe.status, probe.stderr, probe.error);
    if (options.cacheFile !== undefined) writeProbeVerdict(bwrap, status, cacheOptions(options.cacheFile));
  }
  detected.set(key, status);
  return status;
}

/**
 * The same probe without blocking: a command that will build the exec tool starts it early so
 * it runs while modules load and `detectBwrap` then answers from the cache. With a `cacheFile`,
 * a verdict saved by an earlier start that still holds is used without starting bwrap at all.
 * Never rejects.
 */
export function probeBwrap(pathVar: string | undefined = process.env.PATH, options: ProbeOptions = {}): Promise<SandboxStatus> {
  const key = pathVar ?? "";
  const cached = detected.get(key);
  if (cached) return Promise.resolve(cached);
  const bwrap = findOnPath("bwrap", pathVar);
  if (!bwrap) return Promise.resolve(detectBwrap(pathVar));
  const saved = options.cacheFile === undefined ? undefined : readProbeVerdict(bwrap, cacheOptions(options.cacheFile));
  if (saved !== undefined) {
    detected.set(key, saved);
    return Promise.resolve(saved);
  }
  return new Promise((resolve) => {
    let stderr = "";
    let error: Error | undefined;
    const child = spawn(bwrap, PROBE_ARGS, { stdio: ["ignore", "ignore", "pipe"], timeout: PROBE_TIMEOUT_MS });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.once("error", (err) => (error = err));
    child.once("close", (code, signal) => {
      // A synchronous probe that finished first decided already; keep one answer per process.
      const decided = detected.get(key);
      const verdict = decided ?? probeVerdict(bwrap, code, stderr, error ?? (signal ? new Error(`the probe was killed (${signal})`) : undefined));
      detected.set(key, verdict);
      if (decided === undefined && options.cacheFile !== undefined) writeProbeVerdict(bwrap, verdict, cacheOptions(options.cacheFile));
      resolve(verdict);
    });
  });
}

function isUnder(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Covers `target` inside the sandbox: a tmpfs over a folder, an empty read-only file over a file. */
function cover(target: string): string[] {
  if (!existsSync(target)) return [];
  return isDir(target) ? ["--tmpfs", target] : ["--ro-bind", "/dev/null", target];
}

/**
 * The bwrap arguments (everything before the command) for one run. Order matters: later mounts
 * sit on top of earlier ones, so covers come after the binds they cover and the workspace comes
 * after a tmpfs that contains it.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const args: string[] = [];
  const systemDirs = SYSTEM_DIRS.filter((d) => existsSync(d));
  for (const dir of systemDirs) args.push("--ro-bind", dir, dir);
  for (const secret of SYSTEM_SECRETS) args.push(...cover(secret));
  if (plan.network) for (const dir of RESOLVER_DIRS.filter((d) => isDir(d))) args.push("--ro-bind", dir, dir);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  const bound = [...systemDirs, plan.workspace];
  const home = plan.home && path.isAbsolute(plan.home) ? path.resolve(plan.home) : undefined;
  // $HOME: a private, empty, writable tmpfs (dotfiles and keys stay outside), unless it is a
  // system folder, the root, or inside the workspace.
  if (home && home !== "/" && !systemDirs.some((d) => isUnder(home, d)) && !isUnder(home, plan.workspace)) {
    args.push("--tmpfs", home);
  }
  for (const dir of (plan.pathDirs ?? []).map((d) => path.resolve(d))) {
    if (!isDir(dir) || bound.some((b) => isUnder(dir, b))) continue;
    // A PATH entry that is /, $HOME or holds the nanobot home would show what the rest hides.
    if (dir === "/" || (home && isUnder(home, dir)) || (plan.nanobotHome && (isUnder(dir, plan.nanobotHome) || isUnder(plan.nanobotHome, dir)))) continue;
    args.push("--ro-bind", dir, dir);
    bound.push(dir);
  }
  const nanobotHome = plan.nanobotHome ? path.resolve(plan.nanobotHome) : undefined;
  // A nanobot home inside a system folder: covered before the workspace goes on top.
  if (nanobotHome && !isUnder(nanobotHome, plan.workspace) && systemDirs.some((d) => isUnder(nanobotHome, d))) args.push(...cover(nanobotHome));
  args.push("--bind", plan.workspace, plan.workspace);
  // A nanobot home inside the workspace: covered after the workspace bind.
  if (nanobotHome && isUnder(nanobotHome, plan.workspace) && nanobotHome !== plan.workspace) args.push(...cover(nanobotHome));
  const memory = path.join(plan.workspace, "memory");
  if (isDir(memory)) args.push("--ro-bind", memory, memory);
  const configPath = plan.configPath;
  if (configPath && bound.some((b) => isUnder(configPath, b))) args.push(...cover(configPath));
  if (!plan.network) args.push("--unshare-net");
  args.push(...ISOLATION, "--chdir", plan.cwd);
  return args;
}

/** Why this workspace cannot be sandboxed (binding it would expose the system or the home), or undefined. */
export function sandboxConflict(workspace: string, nanobotHome: string | undefined): string | undefined {
  const ws = path.resolve(workspace);
  if (SYSTEM_DIRS.some((d) => isUnder(d, ws))) return `the workspace ${ws} contains system folders; it cannot be the only writable place`;
  if (nanobotHome && path.resolve(nanobotHome) === ws) return `the workspace is the nanobot home (${ws}); config.json and state.db would be visible — use a subfolder (agents.defaults.workspace)`;
  return undefined;
}
