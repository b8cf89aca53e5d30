/**
 * The built-in deny list of the exec guard. Rules look at parsed segments (quotes removed,
 * wrappers such as sudo/env/xargs skipped) so spelling tricks do not matter; a few look at
 * the raw text because their shape only exists there (fork bombs, pipes into a shell).
 */
import path from "node:path";
import picomatch from "picomatch";
import { commandName, commandWords, type ShellSegment } from "./shell-split.js";

export interface DenyHit {
  reason: string;
}

/** Files whose writes would corrupt nanobot's own memory: one list shared with the file tools. */
export { DEFAULT_PROTECTED_PATHS } from "./fs-protected.js";

const BLOCK_DEVICE = /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|loop|md|dm-|mapper\/|sr|fd\d)/;
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh"]);
const POWER = new Set(["shutdown", "reboot", "poweroff", "halt"]);
const DISK_TOOLS = new Set(["fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "wipefs", "diskpart", "mke2fs", "mkswap", "swapoff", "blkdiscard", "shred"]);
/** Commands that modify (or remove) every path argument they get. */
const MODIFY_ANY_ARG = new Set(["mv", "rm", "truncate", "shred", "tee", "touch", "chmod", "chown", "unlink", "sponge"]);
/** Commands whose last argument is the written destination. */
const MODIFY_LAST_ARG = new Set(["cp", "ln", "install", "rsync", "scp"]);
const INTERPRETERS = new Set(["python", "python3", "node", "perl", "ruby", "php", "deno", "bun"]);

function isShortFlagWith(word: string, letters: string): boolean {
  return /^-[A-Za-z]+$/.test(word) && [...letters].some((l) => word.includes(l));
}

/** Segment words from the command on, with the command reduced to its base name. */
function argv(segment: ShellSegment): string[] {
  const words = commandWords(segment.words);
  return words.length > 0 ? [commandName(segment.words), ...words.slice(1)] : [];
}

function referencesProtected(word: string, protectedPaths: readonly string[]): boolean {
  const candidates = [word, ...word.split("=").slice(1)];
  return candidates.some((candidate) => {
    if (candidate === "") return false;
    const normal = path.posix.normalize(candidate.replace(/^\.\//, ""));
    return protectedPaths.some((file) => {
      if (normal === file || normal.endsWith(`/${file}`) || normal === path.posix.basename(file)) return true;
      // A glob such as memory/* or memory/hist* written by the model, expanded by bash.
      if (!/[*?[{]/.test(normal) || normal.includes("://")) return false;
      const base = normal.split("/").pop() ?? "";
      try {
        return picomatch(normal, { dot: true })(file) || (base !== "" && picomatch(base, { dot: true })(path.posix.basename(file)));
      } catch {
        return false; // not a valid glob, so bash will not expand it to the file either
      }
    });
  });
}

function protectedWrite(segment: ShellSegment, protectedPaths: readonly string[]): string | undefined {
  for (const redirect of segment.redirects) {
    if (redirect.op.includes(">") && referencesProtected(redirect.target, protectedPaths)) return `writes to the memory file ${redirect.target}`;
  }
  const [name = "", ...args] = argv(segment);
  // Inline interpreter code (python -c "open('memory/history.jsonl','w')") mentions the path inside a string.
  const inline = INTERPRETERS.has(name) ? args.find((arg) => protectedPaths.some((file) => arg.includes(file))) : undefined;
  if (inline) return `inline ${name} code touches the memory file (use the memory tools instead)`;
  const touching = args.filter((arg) => referencesProtected(arg, protectedPaths));
  if (touching.length === 0) return undefined;
  const inPlace = (name === "sed" || name === "perl") && args.some((a) => a === "-i" || a.startsWith("-i") || a === "--in-place" || (/^-[A-Za-z]+$/.test(a) && a.includes("i")));
  const last = args.filter((a) => !a.startsWith("-")).pop();
  if (
    MODIFY_ANY_ARG.has(name) ||
    inPlace ||
    INTERPRETERS.has(name) ||
    (MODIFY_LAST_ARG.has(name) && last !== undefined && referencesProtected(last, protectedPaths)) ||
    (name === "dd" && args.some((a) => a.startsWith("of=")))
  ) {
    return `modifies the memory file ${touching[0]} (use the memory tools instead)`;
  }
  return undefined;
}

/** Built-in rules for one segment; returns the first that fires. */
export function denySegment(segment: ShellSegment, protectedPaths: readonly string[]): DenyHit | undefined {
  const [name = "", ...args] = argv(segment);
  const first = commandWords(segment.words)[0] ?? "";
  if (first.includes("$") || first.includes("`")) return { reason: `the command name ${first} is computed at run time` };
  if (name === "rm" && args.some((a) => isShortFlagWith(a, "rRf") || a === "--recursive" || a === "--force" || a === "--no-preserve-root")) {
    return { reason: "recursive or forced rm" };
  }
  if (name === "find" && args.some((a) => a === "-delete" || a === "-exec" || a === "-execdir" || a === "-ok")) {
    return { reason: "find with -delete/-exec can remove files in bulk" };
  }
  if (/^mkfs(\.|$)/.test(name) || DISK_TOOLS.has(name)) return { reason: `${name} destroys file systems or disk data` };
  if (name === "dd" && args.some((a) => a.startsWith("if="))) return { reason: "dd if= (raw disk copy)" };
  if (name === "format" && args.some((a) => /^[a-z]:$/i.test(a))) return { reason: "format of a drive" };
  if (POWER.has(name)) return { reason: `${name} stops the machine` };
  if ((name === "init" || name === "telinit") && args.some((a) => a === "0" || a === "6")) return { reason: `${name} ${args.join(" ")} stops the machine` };
  if (name === "systemctl" && args.some((a) => ["poweroff", "reboot", "halt", "kexec", "suspend", "hibernate"].includes(a))) {
    return { reason: "systemctl power action stops the machine" };
  }
  if (name === "kill" && args.includes("-1")) return { reason: "kill -1 signals every process" };
  if ((name === "chmod" || name === "chown" || name === "chgrp") && args.some((a) => isShortFlagWith(a, "R") || a === "--recursive") && args.includes("/")) {
    return { reason: `recursive ${name} on /` };
  }
  for (const redirect of segment.redirects) {
    if (redirect.op.includes(">") && BLOCK_DEVICE.test(redirect.target)) return { reason: `writes to the block device ${redirect.target}` };
  }
  const device = args.find((a) => BLOCK_DEVICE.test(a.replace(/^of=/, "")));
  if (device && (device.startsWith("of=") || MODIFY_ANY_ARG.has(name) || MODIFY_LAST_ARG.has(name))) return { reason: `writes to the block device ${device.replace(/^of=/, "")}` };
  if (name === "mv" && args.includes("/dev/null")) return { reason: "mv to /dev/null destroys the file" };
  const memory = protectedWrite(segment, protectedPaths);
  if (memory) return { reason: memory };
  return undefined;
}

/** Rules on the raw command text. */
export function denyRaw(command: string): DenyHit | undefined {
  if (/:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:/.test(command) || /\b(\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\b/.test(command)) {
    return { reason: "fork bomb" };
  }
  if (/\|\s*(?:sudo\s+)?(?:\S*\/)?(?:ba|z|k|da|a)?sh\b(?!\s+-n\b)/.test(command)) {
    return { reason: "piping into a shell runs unreviewed code" };
  }
  return undefined;
}

/** `bash -c "…"`, `sh -c`, `eval …`: the nested command text to check as well. */
export function nestedCommand(segment: ShellSegment): string | undefined {
  const [name = "", ...args] = argv(segment);
  if (name === "eval") return args.join(" ");
  if (SHELLS.has(name)) {
    const flag = args.findIndex((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a));
    if (flag >= 0) return args[flag + 1];
  }
  return undefined;
}
