/**
 * Keys of the Python nanobot's schema that nanobot (TS) does not act on. A Python `config.json`
 * still loads; each such key set in the file gets one line — "not supported by nanobot (TS):
 * <reason>" — at every load (so `config check`, `status`, `agent` and `gateway` all print it),
 * and is removed before validation so it is not also reported as an unknown key.
 *
 * Quiet: a value equal to the Python default (the Python template, `nanobot onboard`, writes
 * every key with its default; those lines would only be noise), and a value that asks for what
 * nanobot does anyway (`tools.my.enable: false`). For a group (`transcription`, `tools.cliApps`)
 * each member is compared on its own and the line names the members that differ.
 * docs/python-config-keys.md lists every key with its status.
 */
import { isDeepStrictEqual } from "node:util";
import { findProviderSpec } from "../providers/provider-catalog.js";
import { formatPath } from "./interpolate.js";
import { isPlainObject } from "./normalize.js";
import type { PlainObject } from "./normalize.js";

export interface UnsupportedKey {
  /** camelCase path; `*` matches any entry name (a provider, an MCP server). */
  path: readonly string[];
  reason: string;
  /** The Python schema's default (for a group: its members' defaults); equal values are quiet. */
  pythonDefault?: unknown;
  /** Values that match nanobot's fixed behaviour: accepted without a note. */
  fine?: (value: unknown) => boolean;
}

const isFalse = (v: unknown): boolean => v === false;
const isEmpty = (v: unknown): boolean => v === "" || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0);
/** A group switched off (`enable: false` / `enabled: false`) asks for nothing. */
const switchedOff = (v: unknown): boolean => isPlainObject(v) && (v.enable === false || v.enabled === false);

const NO_TRANSCRIPTION = "voice messages are not transcribed";
const NO_API_SERVER = "nanobot has no separate API server; the OpenAI-compatible API is served by the gateway on gateway.host/port";
const NO_BEDROCK = "AWS Bedrock is not a nanobot provider";
const FIXED_SANDBOX = "the bwrap sandbox binds the workspace and the system folders only";
const WEBUI = "settings of the Python WebUI";

export const UNSUPPORTED_KEYS: readonly UnsupportedKey[] = [
  // agents.defaults
  { path: ["agents", "defaults", "botName"], pythonDefault: "nanobot", reason: "the terminal always says nanobot" },
  { path: ["agents", "defaults", "botIcon"], pythonDefault: "🐈", reason: "the terminal shows no bot icon" },
  { path: ["agents", "defaults", "memoryWindow"], reason: "the old Python key; nanobot replays agents.defaults.maxMessages messages (default 120)" },
  // channels (the Python switches beside the channel entries)
  { path: ["channels", "showReasoning"], pythonDefault: true, fine: isFalse, reason: "nanobot's channels never show model reasoning" },
  { path: ["channels", "extractDocumentText"], pythonDefault: true, reason: "deprecated in the Python nanobot too; documents are read on demand" },
  { path: ["channels", "transcriptionProvider"], pythonDefault: "groq", reason: NO_TRANSCRIPTION },
  { path: ["channels", "transcriptionLanguage"], pythonDefault: null, reason: NO_TRANSCRIPTION },
  // top level
  {
    path: ["transcription"],
    pythonDefault: { enabled: true, provider: null, model: null, language: null, maxDurationSec: 120, maxUploadMb: 25 },
    fine: switchedOff,
    reason: NO_TRANSCRIPTION,
  },
  { path: ["audio"], reason: "text-to-speech is not part of nanobot (TS)" },
  { path: ["gateway", "restartMode"], pythonDefault: "auto", reason: "nanobot does not restart itself; run it under a supervisor (systemd, docker --restart)" },
  { path: ["gateway", "heartbeat", "keepRecentMessages"], pythonDefault: 8, reason: "each heartbeat runs in its own session; no messages are carried between runs" },
  { path: ["api", "apiKey"], pythonDefault: "", reason: "nanobot has no separate API server; the OpenAI-compatible API is on the gateway and uses gateway.apiKey" },
  { path: ["api", "host"], pythonDefault: "127.0.0.1", reason: NO_API_SERVER },
  { path: ["api", "port"], pythonDefault: 8900, reason: NO_API_SERVER },
  // providers
  { path: ["providers", "*", "proxy"], fine: isEmpty, reason: "model requests use the direct connection (or HTTPS_PROXY where Node honours it); a per-provider proxy is not supported" },
  { path: ["providers", "*", "thinkingStyle"], fine: isEmpty, reason: "custom thinking-style request fields are not sent; use agents.defaults.reasoningEffort" },
  { path: ["providers", "*", "displayName"], reason: "provider display names are not shown" },
  { path: ["providers", "*", "region"], reason: NO_BEDROCK },
  { path: ["providers", "*", "profile"], reason: NO_BEDROCK },
  // tools
  { path: ["tools", "web", "proxy"], fine: isEmpty, reason: "web_fetch connects directly to the address it checked (the SSRF pinning); a proxy would bypass that check" },
  { path: ["tools", "web", "fetch", "useJinaReader"], pythonDefault: true, fine: isFalse, reason: "web_fetch reads pages itself; it never sends URLs to Jina Reader" },
  { path: ["tools", "exec", "sandboxRoBinds"], fine: isEmpty, reason: FIXED_SANDBOX },
  { path: ["tools", "exec", "sandboxRwBinds"], fine: isEmpty, reason: FIXED_SANDBOX },
  { path: ["tools", "file"], pythonDefault: { enable: true }, reason: "the file tools are always offered (deny them with an agent's permissions)" },
  {
    path: ["tools", "cliApps"],
    pythonDefault: { enable: true, installTimeout: 300, runTimeout: 60, catalogTtlSeconds: 3600 },
    fine: switchedOff,
    reason: "CLI-app tools are not part of nanobot (TS)",
  },
  { path: ["tools", "my"], pythonDefault: { enable: true, allowSet: false }, fine: switchedOff, reason: "the self-inspection tool is not part of nanobot (TS)" },
  {
    path: ["tools", "imageGeneration"],
    pythonDefault: {
      enabled: false,
      provider: "openrouter",
      model: "openai/gpt-5.4-image-2",
      defaultAspectRatio: "1:1",
      defaultImageSize: "1K",
      maxImagesPerTurn: 4,
      saveDir: "generated",
    },
    fine: switchedOff,
    reason: "image generation is not part of nanobot (TS)",
  },
  { path: ["tools", "maxSessionMessagesPerMinute"], pythonDefault: 6, reason: "the message tool is not rate-limited per session" },
  { path: ["tools", "webuiAllowLocalServiceAccess"], pythonDefault: true, reason: WEBUI },
  { path: ["tools", "allowLocalPreviewAccess"], pythonDefault: true, reason: WEBUI },
  { path: ["tools", "webuiAllowRemotePackageInstall"], pythonDefault: false, reason: WEBUI },
  { path: ["tools", "mcpServers", "*", "auth"], reason: "not read; MCP OAuth is set with mcpServers.<name>.oauth and `nanobot mcp login <name>`" },
  { path: ["mcpServers", "*", "auth"], reason: "not read; MCP OAuth is set with mcpServers.<name>.oauth and `nanobot mcp login <name>`" },
];

/** The Python template's value for "unset": nothing to act on, nothing to say. */
function isUnset(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * The paths (below `path`) whose values ask for something: `[path]` for a plain key, the
 * differing members for a group; empty when the value is quiet.
 */
function askedFor(entry: UnsupportedKey, value: unknown, path: string[]): string[][] {
  if (isUnset(value) || entry.fine?.(value) || isDeepStrictEqual(value, entry.pythonDefault)) return [];
  const defaults = entry.pythonDefault;
  if (!isPlainObject(defaults) || !isPlainObject(value)) return [path];
  return Object.keys(value)
    .filter((k) => !isUnset(value[k]) && !isDeepStrictEqual(value[k], defaults[k]))
    .map((k) => [...path, k]);
}

/**
 * Removes the unsupported keys from a normalised document (in place) and returns one warning
 * for each that was set to something nanobot does not do.
 */
export function takeUnsupportedKeys(doc: PlainObject, file: string, entries: readonly UnsupportedKey[] = UNSUPPORTED_KEYS): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    for (const { parent, key, path } of matches(doc, entry.path)) {
      const value = parent[key];
      delete parent[key];
      const asked = askedFor(entry, value, path);
      if (asked.length > 0) out.push(`${file}: ${asked.map(formatPath).join(", ")}: not supported by nanobot (TS): ${entry.reason}`);
    }
  }
  return out;
}

function matches(doc: PlainObject, pattern: readonly string[]): Array<{ parent: PlainObject; key: string; path: string[] }> {
  let frontier: Array<{ node: PlainObject; path: string[] }> = [{ node: doc, path: [] }];
  for (const segment of pattern.slice(0, -1)) {
    const next: typeof frontier = [];
    for (const { node, path } of frontier) {
      const names = segment === "*" ? Object.keys(node) : [segment];
      for (const name of names) {
        const child = node[name];
        if (isPlainObject(child)) next.push({ node: child, path: [...path, name] });
      }
    }
    frontier = next;
  }
  const last = pattern.at(-1)!;
  return frontier.filter(({ node }) => last in node).map(({ node, path }) => ({ parent: node, key: last, path: [...path, last] }));
}

/**
 * `agents.defaults.timezoneMode` (Python): "auto" means the system's zone, whatever `timezone`
 * the file still holds from when it was written; "manual" means `timezone` as written.
 */
export function applyTimezoneMode(doc: PlainObject): void {
  const agents = doc.agents;
  const defaults = isPlainObject(agents) ? agents.defaults : undefined;
  if (!isPlainObject(defaults)) return;
  const mode = defaults.timezoneMode;
  if (mode !== "auto" && mode !== "manual" && mode !== null) return;
  if (mode === "auto") delete defaults.timezone;
  delete defaults.timezoneMode;
}

const API_TYPES: Record<string, string | undefined> = { auto: undefined, chat_completions: "chat", responses: "responses" };

/**
 * `providers.<name>.apiType` (Python: auto | chat_completions | responses) is nanobot's `api`;
 * an explicit `api` wins. It chooses between OpenAI's two wire APIs, so on a provider that speaks
 * the Anthropic Messages API (the catalog's `anthropic`, or an explicit `api: "anthropic"`) it
 * is not applied and a warning says so. Unknown values are left for the schema to report.
 * Returns the warnings.
 */
export function applyProviderApiType(doc: PlainObject, file: string): string[] {
  const providers = doc.providers;
  if (!isPlainObject(providers)) return [];
  const warnings: string[] = [];
  for (const [name, entry] of Object.entries(providers)) {
    if (!isPlainObject(entry) || !("apiType" in entry)) continue;
    const value = entry.apiType;
    if (value !== null && (typeof value !== "string" || !(value in API_TYPES))) continue;
    const api = typeof value === "string" ? API_TYPES[value] : undefined;
    const anthropic = entry.api === "anthropic" || (entry.api === undefined && findProviderSpec(name)?.api === "anthropic");
    if (api && anthropic) {
      warnings.push(
        `${file}: providers.${name}.apiType: ${JSON.stringify(value)} chooses between OpenAI's chat completions and responses APIs; ` +
          `${name} speaks the Anthropic Messages API, so it is not applied (providers.${name}.api sets the wire API)`,
      );
    } else if (api && entry.api === undefined) {
      entry.api = api;
    }
    delete entry.apiType;
  }
  return warnings;
}
