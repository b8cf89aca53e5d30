/**
 * Builds the system prompt of a turn. Order matters for prompt caching: the parts that change
 * rarely come first (identity, workspace files, tool contract, skills), then memory and recent
 * history (change after consolidation/Dream), and the runtime facts (time, channel) last.
 */
import { describeNow } from "./local-time.js";
import { HistoryLog } from "../memory/history-log.js";
import { loadSkills, mentionedSkills, skillsPrompt } from "../memory/skills.js";
import type { Skill } from "../memory/skills.js";
import { readBootstrapFiles, readMemory } from "../memory/workspace.js";

export const SECTION_SEPARATOR = "\n\n---\n\n";
/** Recent history.jsonl entries of the session shown in the prompt. */
const RECENT_HISTORY_ENTRIES = 5;

const TOOL_CONTRACT = [
  "# Using tools",
  "- Call tools when they help; read files before editing them and check results before claiming success.",
  "- A tool error is information: read it and try another approach instead of repeating the same call.",
  "- Relative paths resolve against the workspace. Keep memory/history.jsonl untouched; it is maintained for you.",
  "- To reply to the user mid-task use the `message` tool; otherwise simply answer.",
].join("\n");

export interface ContextBuilderOptions {
  workspace: string;
  env?: Record<string, string | undefined>;
  timezone?: string;
  disabledSkills?: readonly string[];
  /** Override the package's built-in skills folder (tests). */
  builtinSkillsDir?: string;
  now?: () => number;
}

export interface BuildContextInput {
  /** The agent's own instructions (identity). */
  instructions: string;
  sessionKey: string;
  channel?: string;
  chatId?: string;
  /** The user's text, scanned for `$skill-name` mentions. */
  userText: string;
  /** Turn-specific sections (an active goal) placed just before the runtime facts. */
  extraSections?: readonly string[];
}

export interface BuiltContext {
  system: string;
  /** Skills injected in full because the message named them. */
  injectedSkills: string[];
}

export class ContextBuilder {
  readonly history: HistoryLog;

  constructor(private readonly options: ContextBuilderOptions) {
    this.history = new HistoryLog(options.workspace, options.now);
  }

  skills(): Skill[] {
    return loadSkills({
      workspace: this.options.workspace,
      env: this.options.env,
      disabled: this.options.disabledSkills,
      ...(this.options.builtinSkillsDir ? { builtinDir: this.options.builtinSkillsDir } : {}),
    });
  }

  build(input: BuildContextInput): BuiltContext {
    const sections: string[] = [input.instructions.trim()];
    for (const file of readBootstrapFiles(this.options.workspace)) sections.push(`# ${file.file}\n\n${file.content}`);
    sections.push(TOOL_CONTRACT);
    const skills = this.skills();
    const summary = skillsPrompt(skills);
    if (summary) sections.push(summary);
    const memory = readMemory(this.options.workspace);
    if (memory) sections.push(`# Memory (memory/MEMORY.md)\n\n${memory}`);
    const recent = this.history.recent(input.sessionKey, RECENT_HISTORY_ENTRIES);
    if (recent.length > 0) sections.push(`# Earlier in this conversation (summarised)\n\n${recent.map((e) => `- [${e.timestamp}] ${e.content}`).join("\n")}`);
    const injected = mentionedSkills(input.userText, skills);
    for (const skill of injected) {
      sections.push(skill.available ? `# Skill requested: ${skill.name}\n\n${skill.body}` : `# Skill requested: ${skill.name}\n\nThis skill is unavailable here (needs ${skill.missing.join(", ")}); tell the user what to install.`);
    }
    for (const extra of input.extraSections ?? []) if (extra) sections.push(extra);
    sections.push(this.runtimeFacts(input));
    return { system: sections.filter(Boolean).join(SECTION_SEPARATOR), injectedSkills: injected.map((s) => s.name) };
  }

  private runtimeFacts(input: BuildContextInput): string {
    const now = new Date((this.options.now ?? Date.now)());
    const { time, zone } = describeNow(now, this.options.timezone);
    const lines = [`# Runtime`, `- Current time: ${time} (${zone})`, `- Workspace: ${this.options.workspace}`];
    if (input.channel) lines.push(`- Channel: ${input.channel}`);
    if (input.chatId) lines.push(`- Chat: ${input.chatId}`);
    lines.push(`- Session: ${input.sessionKey}`);
    return lines.join("\n");
  }
}
