/**
 * Keys of the Go nanobot's `nanobot.yaml` that nanobot (TS) does not act on. Like the Python
 * ones (src/config/python-keys.ts) each set key gets one line — "not supported by nanobot (TS):
 * <reason>" — at every load, instead of a bare "unknown key", and is removed before validation.
 * README's Go section lists them.
 */
import type { UnsupportedKey } from "./python-keys.js";

const CONTAINER = "nanobot runs an MCP server from its command (or connects to its url); Go's container settings are not used";

export const GO_UNSUPPORTED_KEYS: readonly UnsupportedKey[] = [
  { path: ["extends"], reason: "other config files are not merged in; copy their agents and mcpServers into this file" },
  { path: ["profiles"], reason: "Go's --profile overlays are not applied; keep one config file per setup" },
  { path: ["auth"], reason: "Go's OAuth for its own MCP endpoint; nanobot's gateway uses gateway.apiKey (bearer token)" },
  { path: ["workspaceId"], reason: "Go's hosted workspace service; nanobot's workspace is agents.defaults.workspace" },
  { path: ["workspaceBaseUri"], reason: "Go's hosted workspace service; nanobot's workspace is agents.defaults.workspace" },
  { path: ["mcpServers", "*", "image"], reason: CONTAINER },
  { path: ["mcpServers", "*", "dockerfile"], reason: CONTAINER },
  { path: ["mcpServers", "*", "source"], reason: CONTAINER },
  { path: ["mcpServers", "*", "sandboxed"], fine: (v) => v === false, reason: CONTAINER },
  { path: ["mcpServers", "*", "ports"], reason: CONTAINER },
  { path: ["mcpServers", "*", "reversePorts"], reason: CONTAINER },
  { path: ["mcpServers", "*", "workdir"], reason: `${CONTAINER}; set cwd for the server's working directory` },
];
