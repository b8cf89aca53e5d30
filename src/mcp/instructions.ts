/**
 * Go nanobot dynamic text: agent `instructions`, `publish.introduction` and top-level `prompts`
 * templates. A string is expanded at turn time (`${VAR}` from the environment and `env:`
 * defaults, `${nanobot:time}`, `${servers.<name>.instructions}` from that MCP server's
 * initialize result, a template's own arguments, and any other `${…}` as a JavaScript
 * expression over those, as Go evaluates it: go-expression.ts); `{mcpServer, prompt, args}` is an MCP
 * prompt whose text becomes the result (fetched each turn, so a server can change the system
 * prompt without a restart). A reference that resolves to nothing is an error naming it, as in
 * Go: a system prompt with a hole in it fails loudly instead of reaching the model.
 */
import { ConfigError } from "../core/errors.js";
import type { McpClientManager } from "./manager.js";
import { evaluateGoExpression, isPlainReference } from "./go-expression.js";
import { formatGoLayout } from "./go-time-layout.js";
import type { WallClock } from "./go-time-layout.js";
import { promptText } from "./result-mapping.js";

export interface PromptInstructions {
  mcpServer: string;
  prompt: string;
  args?: Record<string, string>;
}

/** A top-level `prompts.<name>` entry (Go nanobot): a template with named inputs. */
export interface InlinePrompt {
  description?: string;
  input?: Record<string, unknown>;
  template?: string;
}

export interface ExpandContext {
  env: Record<string, string | undefined>;
  /** The config's `env:` defaults, used when the environment lacks the variable. */
  envDefaults?: Record<string, string>;
  /** Template arguments (`${topic}` in a `prompts` template). */
  vars?: Record<string, string>;
  /** Configured MCP servers, and the initialize `instructions` of those that connected. */
  serverNames?: readonly string[];
  serverInstructions?: (server: string) => string | undefined;
  now?: () => Date;
  /** Where the text came from, for error messages (`agents.main.instructions`). */
  where: string;
}

/**
 * Go's `${nanobot:time}`: RFC 3339 in `TZ` when it names a zone (else UTC), or `TIME_FORMAT`,
 * a Go reference-time layout such as `Mon Jan 2 15:04 MST 2006`.
 */
export function nanobotTime(now: Date, tz: string | undefined, layout: string | undefined): string {
  if (!layout) return rfc3339(now, tz);
  return formatGoLayout(layout, wallClock(now, tz));
}

/** The wall clock of `now` in zone `tz` (UTC when unset or unknown). */
function wallClock(now: Date, tz: string | undefined): WallClock {
  const utc = (): WallClock => ({
    year: now.getUTCFullYear(),
    month: now.getUTCMonth() + 1,
    day: now.getUTCDate(),
    weekday: now.getUTCDay(),
    hour: now.getUTCHours(),
    minute: now.getUTCMinutes(),
    second: now.getUTCSeconds(),
    millisecond: now.getUTCMilliseconds(),
    offsetMinutes: 0,
    zoneName: "UTC",
  });
  if (!tz || tz === "UTC") return utc();
  try {
    const parts = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "short",
    }).formatToParts(now);
    const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? "0";
    const local = Date.UTC(+get("year"), +get("month") - 1, +get("day"), +get("hour"), +get("minute"), +get("second"));
    const offsetMinutes = Math.round((local - Math.floor(now.getTime() / 1000) * 1000) / 60_000);
    return {
      year: +get("year"),
      month: +get("month"),
      day: +get("day"),
      weekday: new Date(local).getUTCDay(),
      hour: +get("hour"),
      minute: +get("minute"),
      second: +get("second"),
      millisecond: now.getUTCMilliseconds(),
      offsetMinutes,
      zoneName: get("timeZoneName"),
    };
  } catch {
    return utc();
  }
}

/** RFC 3339 in `TZ` when it names a zone, else UTC. */
export function rfc3339(now: Date, tz: string | undefined): string {
  const c = wallClock(now, tz);
  const pad = (n: number, width = 2): string => String(n).padStart(width, "0");
  const local = `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}T${pad(c.hour)}:${pad(c.minute)}:${pad(c.second)}`;
  if (c.offsetMinutes === 0) return `${local}Z`;
  const abs = Math.abs(c.offsetMinutes);
  return `${local}${c.offsetMinutes > 0 ? "+" : "-"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

const SERVER_REF = /^servers(?:\.([A-Za-z0-9_-]+)|\[\s*["']([^"']+)["']\s*\])\.instructions$/;

function lookupEnv(name: string, ctx: ExpandContext): string | undefined {
  const direct = ctx.env[name];
  if (direct !== undefined) return direct;
  // Go also matches case-insensitively with `-` read as `_`.
  for (const [key, value] of Object.entries(ctx.env)) {
    if (value !== undefined && key.replace(/-/g, "_").toLowerCase() === name.toLowerCase()) return value;
  }
  return ctx.envDefaults?.[name];
}

/** Go's `servers` global: every configured server, with "" for one that gave no instructions. */
function expressionServers(ctx: ExpandContext): Record<string, { instructions: string }> {
  const out: Record<string, { instructions: string }> = {};
  for (const name of ctx.serverNames ?? []) out[name] = { instructions: ctx.serverInstructions?.(name) ?? "" };
  return out;
}

function resolveExpression(raw: string, ctx: ExpandContext): string {
  const expr = raw.trim();
  if (expr === "nanobot:time") return nanobotTime(ctx.now?.() ?? new Date(), lookupEnv("TZ", ctx), lookupEnv("TIME_FORMAT", ctx));
  if (ctx.vars && Object.hasOwn(ctx.vars, expr)) return ctx.vars[expr] ?? "";
  const server = SERVER_REF.exec(expr);
  if (server) {
    const name = (server[1] ?? server[2])!;
    if (ctx.serverNames && !ctx.serverNames.includes(name)) {
      throw new ConfigError(`${ctx.where}: \${${expr}} names MCP server "${name}", which is not in mcpServers`, { path: ctx.where });
    }
    // A configured server that did not connect has no instructions; Go gives "" too.
    return ctx.serverInstructions?.(name) ?? "";
  }
  if (!isPlainReference(expr)) return evaluateGoExpression(expr, { servers: expressionServers(ctx), ...(ctx.vars ? { vars: ctx.vars } : {}) }, ctx.where);
  const fallback = /^([A-Za-z_][A-Za-z0-9_-]*):?-(.*)$/s.exec(expr);
  const name = fallback ? fallback[1]! : expr;
  const value = lookupEnv(name, ctx);
  if (value !== undefined && value !== "") return value;
  if (fallback) return fallback[2] ?? "";
  if (value !== undefined) return value;
  throw new ConfigError(
    `${ctx.where}: \${${expr}} is not set (an environment variable, an env: default, nanobot:time, servers.<name>.instructions${ctx.vars ? " or a prompt argument" : ""}); write $\${…} for a literal`,
    { path: ctx.where },
  );
}

/**
 * Replaces every `${…}` in `text` (braces may nest, as in Go); `$${…}` stays a literal `${…}`.
 * Throws ConfigError for a reference that resolves to nothing.
 */
export function expandTemplate(text: string, ctx: ExpandContext): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const at = text.indexOf("${", i);
    if (at < 0) break;
    if (at > 0 && text[at - 1] === "$") {
      out += text.slice(i, at - 1) + "${";
      i = at + 2;
      continue;
    }
    let depth = 1;
    let end = at + 2;
    for (; end < text.length && depth > 0; end++) {
      if (text[end] === "{") depth++;
      else if (text[end] === "}") depth--;
    }
    if (depth > 0) break; // unclosed: the rest is literal
    const inner = expandTemplate(text.slice(at + 2, end - 1), ctx);
    out += text.slice(i, at) + resolveExpression(inner, ctx);
    i = end;
  }
  return out + text.slice(i);
}

/** Whether `text` has anything `expandTemplate` would replace (plain text is used as is). */
export function hasTemplate(text: string): boolean {
  return text.includes("${");
}

/**
 * The text of `{mcpServer, prompt, args}`: the config's own `prompts.<prompt>` when `mcpServer`
 * names it too (Go's inline prompts), else the server's `prompts/get`. Args are expanded first.
 * Throws when the server is unknown or `prompts/get` fails.
 */
export async function resolvePromptInstructions(
  manager: McpClientManager | undefined,
  spec: PromptInstructions,
  ctx: ExpandContext & { prompts?: Record<string, InlinePrompt> } = { env: process.env, where: "instructions" },
  signal?: AbortSignal,
): Promise<string> {
  const args: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.args ?? {})) args[k] = expandTemplate(v, { ...ctx, vars: undefined });
  const inline = ctx.prompts?.[spec.prompt];
  if (inline && spec.mcpServer === spec.prompt) return renderInlinePrompt(spec.prompt, inline, args, ctx);
  if (!manager || !manager.serverNames().includes(spec.mcpServer)) {
    throw new ConfigError(`${ctx.where}: mcpServer "${spec.mcpServer}" is not in mcpServers`, { path: `${ctx.where}.mcpServer` });
  }
  const result = await manager.getPrompt(spec.mcpServer, spec.prompt, args, signal);
  return promptText(result);
}

/** A top-level `prompts.<name>` template with its arguments filled in. */
export function renderInlinePrompt(name: string, prompt: InlinePrompt, args: Record<string, string>, ctx: ExpandContext): string {
  return expandTemplate(prompt.template ?? "", { ...ctx, vars: args, where: `prompts.${name}.template` });
}
