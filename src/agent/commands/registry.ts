/**
 * Slash commands: a registry of named commands with descriptions, a parser that accepts
 * `/cmd@botname args`, and a "did you mean" for unknown names. Commands answer without the
 * LLM and are never written to the model-facing history.
 */
import type { DreamResult } from "../../memory/dream.js";
import type { Skill } from "../../memory/skills.js";
import type { Runtime } from "../runtime.js";
import type { TurnRequest } from "../turn-processor.js";

/** What a command can ask of the loop that runs it. */
export interface CommandHost {
  readonly runtime: Runtime;
  readonly commands: CommandRegistry;
  /** Cancels the session's running turn, its sub-agents and queued messages; returns how many. */
  stopSession(sessionKey: string): number;
  /** The `/status` text of a session. */
  statusText(sessionKey: string, agent?: string): Promise<string>;
  runDream(signal?: AbortSignal): Promise<DreamResult>;
  /** Restarts the process (gateway) when the face supports it; returns the user-facing answer. */
  restart(): Promise<string>;
  skills(): Skill[];
}

export interface CommandInvocation {
  name: string;
  /** Everything after the command name, trimmed. */
  args: string;
  sessionKey: string;
  request: TurnRequest;
  host: CommandHost;
  signal?: AbortSignal;
}

export interface SlashCommand {
  name: string;
  description: string;
  /** Shown in /help, e.g. `/history [n]`. */
  usage?: string;
  /** Runs at once, outside the session lock (`/stop`, `/status`, `/restart`). */
  priority?: boolean;
  run(invocation: CommandInvocation): Promise<string>;
}

export interface ParsedCommand {
  name: string;
  args: string;
}

/** A message's text (its text parts joined), where a slash command would be. */
export function contentText(content: TurnRequest["content"]): string {
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** Whether the request is a slash command (answered without the model). */
export function isCommandRequest(request: TurnRequest): boolean {
  return parseCommand(contentText(request.content)) !== undefined;
}

/** `/name`, `/name@bot`, `/name args…`; `/path/to/file` and plain text are not commands. */
export function parseCommand(text: string): ParsedCommand | undefined {
  const match = /^\/([A-Za-z][\w-]*)(?:@[\w.]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: (match[1] ?? "").toLowerCase(), args: (match[2] ?? "").trim() };
}

export class CommandRegistry {
  private readonly byName = new Map<string, SlashCommand>();

  register(command: SlashCommand): this {
    this.byName.set(command.name.toLowerCase(), command);
    return this;
  }

  get(name: string): SlashCommand | undefined {
    return this.byName.get(name.toLowerCase());
  }

  list(): SlashCommand[] {
    return [...this.byName.values()];
  }

  /**
   * One `/usage — description` line per command, by name: what `/help` prints on every face
   * (the terminal adds its own local commands below), so no face can list a command that is
   * not here.
   */
  helpLines(): string[] {
    return this.list()
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((c) => `${c.usage ?? `/${c.name}`} — ${c.description}`);
  }

  /** True when `text` is a command that must bypass the session lock. */
  isPriority(text: string): boolean {
    const parsed = parseCommand(text);
    return parsed !== undefined && this.get(parsed.name)?.priority === true;
  }

  /** The closest known name (edit distance ≤ 2, or a unique prefix match). */
  suggest(name: string): string | undefined {
    let best: { name: string; distance: number } | undefined;
    for (const known of this.byName.keys()) {
      const distance = known.startsWith(name) || name.startsWith(known) ? 1 : levenshtein(name, known);
      if (distance <= 2 && (!best || distance < best.distance)) best = { name: known, distance };
    }
    return best?.name;
  }

  unknownText(name: string): string {
    const suggestion = this.suggest(name);
    return suggestion
      ? `Unknown command "/${name}". Did you mean "/${suggestion}"?`
      : `Unknown command "/${name}". Type /help to see the commands.`;
  }

  /** Runs a parsed command; unknown names get the suggestion text. */
  async run(parsed: ParsedCommand, invocation: Omit<CommandInvocation, "name" | "args">): Promise<string> {
    const command = this.get(parsed.name);
    if (!command) return this.unknownText(parsed.name);
    return command.run({ ...invocation, name: command.name, args: parsed.args });
  }
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    prev = cur;
  }
  return prev[b.length] ?? Math.max(a.length, b.length);
}
