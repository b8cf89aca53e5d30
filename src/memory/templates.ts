/**
 * The starting content of the workspace files. A file whose content is still its template
 * says nothing about this user, so the context builder leaves it out of the prompt.
 */

export const WORKSPACE_TEMPLATES: Readonly<Record<string, string>> = {
  "AGENTS.md": `# Agent instructions

Write here how you want the assistant to work: conventions, tools to prefer, things to avoid.
`,
  "SOUL.md": `# Soul

The assistant's personality and voice. Describe the tone you want (e.g. warm, terse, playful).
`,
  "USER.md": `# User

Facts about you the assistant should know: name, time zone, preferences, ongoing projects.
`,
  "TOOLS.md": `# Tools

Notes about local tools and services the assistant may use (hosts, commands, accounts).
`,
  "HEARTBEAT.md": `# Heartbeat tasks

Tasks the assistant checks every 30 minutes. Write one task per line as a list item, e.g.
"- check my inbox for anything urgent". With no list items, the heartbeat does nothing.
`,
  "memory/MEMORY.md": `# Long-term memory

Durable facts the assistant has learned. Maintained by the assistant (Dream) and by you.
`,
  "memory/history.jsonl": "",
};

/** The bootstrap files that go into the system prompt, in prompt order. */
export const BOOTSTRAP_FILES = ["AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md"] as const;

/** The files Dream may edit (workspace-relative). */
export const DREAM_WRITABLE_FILES = ["memory/MEMORY.md", "SOUL.md", "USER.md"] as const;

export function isTemplate(relativePath: string, content: string): boolean {
  const template = WORKSPACE_TEMPLATES[relativePath];
  return template !== undefined && template.trim() === content.trim();
}
