/**
 * createBuiltinTools: the built-in tool set for one agent, wired to its guards and seams.
 * Config switches (`exec.enable`, `web.enable`) and the agent's `enabled` list decide which
 * tools exist at all; a disabled tool is absent, not refused at call time.
 */
import type { Tool } from "../tool.js";
import { createEditFileTool } from "./edit-file.js";
import { ExecGuard } from "./exec-guard.js";
import { createExecTool } from "./exec.js";
import { createFindFilesTool } from "./find-files.js";
import { createReadFileTool } from "./fs-read.js";
import { createWriteFileTool } from "./fs-write.js";
import { createGrepTool } from "./grep.js";
import { createListDirTool } from "./list-dir.js";
import { createMessageTool, type SendMessage } from "./message.js";
import { SsrfGuard, type ResolveHost } from "./ssrf-guard.js";
import { createWebFetchTool } from "./web-fetch.js";
import { createWebSearchTool, type WebSearchConfig } from "./web-search/index.js";
import { WorkspaceGuard } from "./workspace-guard.js";

export const BUILTIN_TOOL_NAMES = ["read_file", "write_file", "edit_file", "list_dir", "find_files", "grep", "exec", "web_fetch", "web_search", "message"] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export interface BuiltinToolsOptions {
  workspace: string;
  restrictToWorkspace?: boolean;
  extraRoots?: string[];
  exec?: {
    enable?: boolean;
    /** Default timeout in seconds (1-600). */
    timeout?: number;
    allowPatterns?: string[];
    denyPatterns?: string[];
    /** Workspace-relative files no command may write (default `memory/history.jsonl`). */
    protectedPaths?: string[];
    /** "auto" (bwrap when it works here), "bwrap" (required) or "none". */
    sandbox?: "auto" | "bwrap" | "none";
    /** The sandbox keeps the network (default false). */
    network?: boolean;
    /** Environment variables passed to commands besides PATH, HOME, LANG, TERM. */
    allowedEnvKeys?: string[];
    pathAppend?: string;
    pathPrepend?: string;
  };
  /** `$NANOBOT_HOME` and the config file: hidden from sandboxed commands. */
  nanobotHome?: string;
  configPath?: string;
  /** Environment commands draw from (default: this process's). */
  env?: NodeJS.ProcessEnv;
  web?: {
    enable?: boolean;
    search?: WebSearchConfig;
    fetch?: { maxChars?: number; maxBytes?: number; timeoutMs?: number; maxRedirects?: number; userAgent?: string };
  };
  /** CIDRs the SSRF guard lets through (`tools.ssrfWhitelist`). */
  ssrfWhitelist?: string[];
  /** DNS seam for the SSRF guard. */
  resolveHost?: ResolveHost;
  /** HTTP seam for web_search (web_fetch connects itself, pinned to checked addresses). */
  fetch?: typeof fetch;
  /** Delivery seam for `message`; without it the tool is not offered. */
  sendMessage?: SendMessage;
  /** The agent's tool list: only these built-ins are returned (default: all that are enabled). */
  enabled?: readonly string[];
  /** Home directory for `~` (tests). */
  home?: string;
}

/** Throws `ConfigError` for invalid patterns, CIDRs or search settings. */
export function createBuiltinTools(options: BuiltinToolsOptions): Tool[] {
  const workspaceGuard = new WorkspaceGuard({
    workspace: options.workspace,
    restrictToWorkspace: options.restrictToWorkspace ?? false,
    ...(options.extraRoots ? { extraRoots: options.extraRoots } : {}),
    ...(options.home ? { home: options.home } : {}),
    // One protected list for every tool: what exec refuses, write_file and edit_file refuse too.
    ...(options.exec?.protectedPaths ? { protectedPaths: options.exec.protectedPaths } : {}),
  });
  const ssrf = new SsrfGuard({ whitelist: options.ssrfWhitelist ?? [], ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}) });
  const wanted = options.enabled ? new Set(options.enabled) : undefined;
  const include = (name: BuiltinToolName): boolean => !wanted || wanted.has(name);
  const tools: Tool[] = [];
  const add = (name: BuiltinToolName, make: () => Tool): void => {
    if (include(name)) tools.push(make());
  };
  add("read_file", () => createReadFileTool(workspaceGuard));
  add("write_file", () => createWriteFileTool(workspaceGuard));
  add("edit_file", () => createEditFileTool(workspaceGuard));
  add("list_dir", () => createListDirTool(workspaceGuard));
  add("find_files", () => createFindFilesTool(workspaceGuard));
  add("grep", () => createGrepTool(workspaceGuard));
  const exec = options.exec ?? {};
  if (exec.enable !== false) {
    add("exec", () =>
      createExecTool({
        workspaceGuard,
        guard: new ExecGuard({
          workspaceGuard,
          ssrf,
          denyPatterns: exec.denyPatterns ?? [],
          allowPatterns: exec.allowPatterns ?? [],
          ...(exec.protectedPaths ? { protectedPaths: exec.protectedPaths } : {}),
          ...(options.home ? { home: options.home } : {}),
        }),
        ...(exec.timeout !== undefined ? { timeout: exec.timeout } : {}),
        ...(exec.sandbox ? { sandbox: exec.sandbox } : {}),
        ...(exec.network !== undefined ? { network: exec.network } : {}),
        ...(exec.allowedEnvKeys ? { allowedEnvKeys: exec.allowedEnvKeys } : {}),
        ...(exec.pathAppend ? { pathAppend: exec.pathAppend } : {}),
        ...(exec.pathPrepend ? { pathPrepend: exec.pathPrepend } : {}),
        ...(options.nanobotHome ? { nanobotHome: options.nanobotHome } : {}),
        ...(options.configPath ? { configPath: options.configPath } : {}),
        ...(options.env ? { env: options.env } : {}),
      }),
    );
  }
  const web = options.web ?? {};
  if (web.enable !== false) {
    // web_fetch makes its own pinned connections (no fetch seam: the pinning is what is tested).
    add("web_fetch", () => createWebFetchTool({ ssrf, ...(web.fetch ?? {}) }));
    const searchTimeout = web.search?.timeout;
    add("web_search", () => createWebSearchTool(web.search ?? {}, options.fetch ?? fetch, searchTimeout ? searchTimeout * 1000 : undefined));
  }
  if (options.sendMessage) {
    const send = options.sendMessage;
    add("message", () => createMessageTool(send));
  }
  return tools;
}
