/**
 * What `tools.exec.sandbox` resolves to on this machine, in one place for the exec tool, the
 * gateway's start-up warning and `nanobot status`: bwrap, or no sandbox with the reason, and
 * whether exec must refuse to run (fail closed).
 */
import { detectBwrap } from "./sandbox-bwrap.js";

export type SandboxSetting = "auto" | "bwrap" | "none";

export const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

export type SandboxState =
  | { kind: "bwrap"; bwrap: string; setting: SandboxSetting }
  | { kind: "none"; setting: SandboxSetting; reason: string; refuse?: string };

export interface SandboxChoice {
  setting?: SandboxSetting;
  restrictToWorkspace?: boolean;
  /** PATH used to find bwrap (default: this process's). */
  pathVar?: string;
  /** Where a fresh probe's verdict is saved for later starts (`sandboxProbeCacheFile`). */
  cacheFile?: string;
}

export function resolveSandbox(choice: SandboxChoice = {}): SandboxState {
  const setting = choice.setting ?? "auto";
  if (setting === "none") {
    const reason = "tools.exec.sandbox is \"none\"";
    return choice.restrictToWorkspace
      ? { kind: "none", setting, reason, refuse: `exec is disabled: tools.restrictToWorkspace is true and ${reason}; without a sandbox the workspace cannot be enforced. Set tools.exec.sandbox to "auto" and ${INSTALL_HINT}.` }
      : { kind: "none", setting, reason };
  }
  const status = detectBwrap(choice.pathVar, choice.cacheFile !== undefined ? { cacheFile: choice.cacheFile } : {});
  if (status.available && status.bwrap) return { kind: "bwrap", bwrap: status.bwrap, setting };
  const reason = status.reason ?? "bubblewrap is unavailable";
  if (setting === "bwrap") {
    return { kind: "none", setting, reason, refuse: `exec is disabled: tools.exec.sandbox is "bwrap" but ${reason}. To fix: ${INSTALL_HINT}.` };
  }
  if (choice.restrictToWorkspace) {
    return { kind: "none", setting, reason, refuse: `exec is disabled: tools.restrictToWorkspace is true but no sandbox is available (${reason}). To fix: ${INSTALL_HINT}.` };
  }
  return { kind: "none", setting, reason };
}

/** One line for `status` and the gateway's start-up output. */
export function describeSandbox(state: SandboxState, network = false): string {
  if (state.kind === "bwrap") return `bwrap (${state.bwrap}; network ${network ? "on" : "off"})`;
  if (state.refuse) return `none — ${state.reason}; exec refuses to run (${INSTALL_HINT})`;
  return `none — ${state.reason}; exec runs unsandboxed, guarded only by the deny list (best-effort)`;
}
