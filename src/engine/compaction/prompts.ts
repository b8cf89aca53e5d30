/**
 * The summary prompts (Go nanobot §7): a fixed six-section template, an initial prompt, and an
 * incremental one that merges new events into the previous summary.
 */

export const SUMMARY_SECTIONS = [
  "Goal",
  "Key Instructions & Preferences",
  "What Happened",
  "Current State",
  "Next Steps",
  "Open Questions & Risks",
] as const;

const TEMPLATE = SUMMARY_SECTIONS.map((s) => `## ${s}`).join("\n");

export const SUMMARY_SYSTEM_PROMPT =
  "You write working summaries of agent conversations so the work can continue after the " +
  "original messages are gone. Be factual and specific: keep file paths, commands, identifiers, " +
  "numbers, decisions and the user's exact requirements. Do not call tools. Answer with the summary only.";

export function initialSummaryPrompt(transcript: string): string {
  return [
    "Summarise the conversation below using exactly these sections:",
    "",
    TEMPLATE,
    "",
    "Write 'None' under a section that has nothing to say.",
    "",
    "<conversation>",
    transcript,
    "</conversation>",
  ].join("\n");
}

export function recompactionPrompt(previousSummary: string, transcript: string): string {
  return [
    "Below is the summary written at the previous compaction, followed by everything that happened since.",
    "Produce one updated summary with exactly these sections:",
    "",
    TEMPLATE,
    "",
    "Merge rules: keep every instruction, preference and unfinished task from the previous summary",
    "unless the new messages settle or revoke it; mark finished work as done instead of listing it as",
    "a next step; fold repeated attempts into one line with their outcome; prefer the newer fact when",
    "the two disagree.",
    "",
    "<previous-summary>",
    previousSummary,
    "</previous-summary>",
    "",
    "<new-messages>",
    transcript,
    "</new-messages>",
  ].join("\n");
}

/** Wraps the summary so the model treats it as context, not as something to talk about. */
export const CARRY_FORWARD_PREAMBLE =
  "Earlier parts of this conversation were condensed to stay within the context limit. " +
  "Treat the summary below as your working memory and carry on from it without mentioning " +
  "the condensation unless the user asks about it.";

export function carryForwardText(summary: string): string {
  return `${CARRY_FORWARD_PREAMBLE}\n\n${summary}`;
}

/** The summary inside a carry-forward message (the preamble removed). */
export function summaryFromCarryForward(text: string): string {
  return text.startsWith(CARRY_FORWARD_PREAMBLE) ? text.slice(CARRY_FORWARD_PREAMBLE.length).trimStart() : text;
}
