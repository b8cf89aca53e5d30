/**
 * Wraps what one server lists as core `Tool`s: MCP tools as they are, prompts and resources
 * as read-only tools (so they batch with other reads). A failing call becomes an `isError`
 * result the model can react to; only an abort is thrown.
 */
import type { Prompt, Resource, ResourceTemplate, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { AbortedError } from "../core/errors.js";
import { mcpErrorText } from "./error-text.js";
import type { JsonSchema } from "../core/llm.js";
import type { Tool, ToolContext, ToolOutput } from "../tools/tool.js";
import type { McpConnection } from "./connection.js";
import { ELICITATION_TIMEOUT_MS } from "./elicitation-router.js";
import { fitToolName, mcpToolName } from "./names.js";
import type { McpToolKind } from "./names.js";
import { mapCallToolResult, mapPromptResult, mapReadResourceResult } from "./result-mapping.js";

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
/** Our own timeout must fire before an engine-level one, so the server is told to cancel. */
const ENGINE_GRACE_MS = 5_000;

/** A tool exposed to the model, with where it comes from. */
export interface McpToolEntry {
  tool: Tool;
  server: string;
  kind: McpToolKind;
  /** The tool, prompt or resource name on the server. */
  sourceName: string;
  /** A tool's name as the Go nanobot shows it: after `toolOverrides` and `toolPrefix`. */
  exposedName: string;
}

/** How MCP tools are named for the model: `mcp_<server>_<tool>` (Python) or bare (Go). */
export type McpToolNaming = "python" | "go";

function errorOutput(err: unknown): ToolOutput {
  if (err instanceof AbortedError) throw err;
  return { content: [{ type: "text", text: mcpErrorText(err) }], isError: true };
}

/**
 * `enabledTools` as the Python nanobot reads it: absent or containing `*` exposes everything;
 * otherwise only the tools listed, by their MCP name or their `mcp_<server>_<tool>` name, so an
 * empty list exposes none.
 */
export function isToolEnabled(enabled: string[] | undefined, tool: string, server?: string): boolean {
  if (!enabled || enabled.includes("*")) return true;
  return enabled.includes(tool) || (server !== undefined && enabled.includes(mcpToolName(server, tool)));
}

/** A tool subset is named: the server's prompts and resources are not offered (Python nanobot). */
export function restrictsTools(enabled: string[] | undefined): boolean {
  return enabled !== undefined && !enabled.includes("*");
}

/** `enabledTools` entries that name no tool of the server (listed by `nanobot mcp list`, logged at start). */
export function unmatchedEnabledTools(conn: McpConnection): string[] {
  const enabled = conn.spec.enabledTools;
  if (!restrictsTools(enabled)) return [];
  const names = new Set(conn.listing.tools.flatMap((t) => [t.name, mcpToolName(conn.name, t.name)]));
  return (enabled ?? []).filter((e) => !names.has(e));
}

export function toolTimeoutMs(conn: McpConnection, fallbackMs: number): number {
  const seconds = conn.spec.toolTimeout;
  return seconds !== undefined && seconds > 0 ? seconds * 1000 : fallbackMs;
}

function objectSchema(schema: McpTool["inputSchema"] | undefined): JsonSchema {
  const s: JsonSchema = { ...(schema ?? {}) };
  s.type = "object";
  s.properties ??= {};
  delete s.$schema;
  return s;
}

/**
 * `toolOverrides` (Go nanobot): when present, only the tools it names are exposed, each with
 * its replacement name, description or input schema; then `toolPrefix` goes before the name.
 */
function exposedTools(conn: McpConnection, tools: readonly McpTool[]): Array<{ tool: McpTool; exposed: string }> {
  const overrides = conn.spec.toolOverrides;
  const prefix = conn.spec.toolPrefix ?? "";
  const out: Array<{ tool: McpTool; exposed: string }> = [];
  for (const t of tools) {
    if (!isToolEnabled(conn.spec.enabledTools, t.name, conn.name)) continue;
    if (overrides && Object.keys(overrides).length > 0) {
      const o = overrides[t.name];
      if (!o) continue;
      const changed: McpTool = {
        ...t,
        ...(o.description ? { description: o.description } : {}),
        ...(o.inputSchema ? { inputSchema: o.inputSchema as McpTool["inputSchema"] } : {}),
      };
      out.push({ tool: changed, exposed: prefix + (o.name || t.name) });
      continue;
    }
    out.push({ tool: t, exposed: prefix + t.name });
  }
  return out;
}

function mcpTool(conn: McpConnection, t: McpTool, exposed: string, timeoutMs: number, naming: McpToolNaming): McpToolEntry {
  const tool: Tool = {
    name: naming === "go" ? fitToolName(exposed) : mcpToolName(conn.name, exposed),
    description: t.description ?? t.title ?? t.annotations?.title ?? t.name,
    parameters: objectSchema(t.inputSchema),
    ...(t.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
    // Our own timer (held while the user answers an elicitation) is the real limit.
    timeoutMs: timeoutMs + ENGINE_GRACE_MS + (conn.canElicit ? ELICITATION_TIMEOUT_MS : 0),
    async execute(args: Record<string, unknown>, ctx: ToolContext, signal: AbortSignal): Promise<ToolOutput> {
      try {
        const options = {
          signal,
          timeoutMs,
          ...(ctx.progress ? { onProgress: ctx.progress } : {}),
          ...(ctx.sessionKey ? { caller: ctx.sessionKey } : {}),
        };
        return mapCallToolResult(await conn.callTool(t.name, args, options));
      } catch (err) {
        return errorOutput(err);
      }
    },
  };
  return { tool, server: conn.name, kind: "tool", sourceName: t.name, exposedName: exposed };
}


function stringArgs(args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined || v === null) continue;
    out[k] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}

function promptTool(conn: McpConnection, p: Prompt): McpToolEntry {
  const properties: Record<string, JsonSchema> = {};
  for (const a of p.arguments ?? []) properties[a.name] = { type: "string", ...(a.description ? { description: a.description } : {}) };
  const required = (p.arguments ?? []).filter((a) => a.required === true).map((a) => a.name);
  const tool: Tool = {
    name: mcpToolName(conn.name, p.name, "prompt"),
    description: `Get the MCP prompt '${p.name}'${p.description ? `: ${p.description}` : ""}`,
    parameters: { type: "object", properties, ...(required.length > 0 ? { required } : {}) },
    readOnly: true,
    async execute(args, _ctx, signal) {
      try {
        return mapPromptResult(await conn.getPrompt(p.name, stringArgs(args), signal));
      } catch (err) {
        return errorOutput(err);
      }
    },
  };
  return { tool, server: conn.name, kind: "prompt", sourceName: p.name, exposedName: p.name };
}

function resourceTool(conn: McpConnection, r: Resource): McpToolEntry {
  const tool: Tool = {
    name: mcpToolName(conn.name, r.name, "resource"),
    description: `Read the MCP resource ${r.uri}${r.description ? `: ${r.description}` : ""}`,
    parameters: { type: "object", properties: {} },
    readOnly: true,
    async execute(_args, _ctx, signal) {
      try {
        return mapReadResourceResult(await conn.readResource(r.uri, signal));
      } catch (err) {
        return errorOutput(err);
      }
    },
  };
  return { tool, server: conn.name, kind: "resource", sourceName: r.name, exposedName: r.name };
}

const SIMPLE_VARIABLE = /\{([A-Za-z0-9_]+)\}/g;

/** Variables of a level-1 URI template (`{name}` only); undefined for anything fancier. */
export function simpleTemplateVariables(template: string): string[] | undefined {
  if (/\{[^A-Za-z0-9_]/.test(template)) return undefined;
  return [...template.matchAll(SIMPLE_VARIABLE)].map((m) => m[1] ?? "");
}

export function expandUriTemplate(template: string, values: Record<string, string>): string {
  return template.replace(SIMPLE_VARIABLE, (_m, name: string) => encodeURIComponent(values[name] ?? ""));
}

function templateTool(conn: McpConnection, t: ResourceTemplate): McpToolEntry | undefined {
  const variables = simpleTemplateVariables(t.uriTemplate);
  if (!variables || variables.length === 0) return undefined;
  const properties = Object.fromEntries(variables.map((v) => [v, { type: "string" }]));
  const tool: Tool = {
    name: mcpToolName(conn.name, t.name, "resource"),
    description: `Read the MCP resource ${t.uriTemplate}${t.description ? `: ${t.description}` : ""}`,
    parameters: { type: "object", properties, required: variables },
    readOnly: true,
    async execute(args, _ctx, signal) {
      try {
        return mapReadResourceResult(await conn.readResource(expandUriTemplate(t.uriTemplate, stringArgs(args)), signal));
      } catch (err) {
        return errorOutput(err);
      }
    },
  };
  return { tool, server: conn.name, kind: "resource", sourceName: t.name, exposedName: t.name };
}

/** Every tool one server contributes, from its current listing. */
export function buildServerTools(
  conn: McpConnection,
  defaultTimeoutMs: number,
  naming: McpToolNaming = "python",
): McpToolEntry[] {
  const { tools, prompts, resources, resourceTemplates } = conn.listing;
  const timeoutMs = toolTimeoutMs(conn, defaultTimeoutMs);
  const own = exposedTools(conn, tools).map(({ tool, exposed }) => mcpTool(conn, tool, exposed, timeoutMs, naming));
  // The Go nanobot offers a server's tools only; its prompts and resources stay MCP prompts
  // and resources (instructions, MCP-UI prompt actions), not tools.
  // A tool subset (enabledTools without "*") leaves prompts and resources out, as in Python.
  if (naming === "go" || restrictsTools(conn.spec.enabledTools)) return own;
  return [
    ...own,
    ...prompts.map((p) => promptTool(conn, p)),
    ...resources.map((r) => resourceTool(conn, r)),
    ...resourceTemplates.map((t) => templateTool(conn, t)).filter((e): e is McpToolEntry => e !== undefined),
  ];
}
