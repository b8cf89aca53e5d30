/**
 * The system prompt of the plain assistant when an agent gives no instructions. The AgentLoop's
 * context builder adds workspace files, memory and skills on top of this.
 */
export interface DefaultInstructionsInput {
  workspace: string;
  timezone?: string;
}

export function buildDefaultInstructions(input: DefaultInstructionsInput): string {
  return [
    "You are nanobot, a helpful personal assistant that can use tools.",
    "Answer directly and concisely. Use tools when they help: read before you edit, and prefer",
    "small verifiable steps. When a tool fails, read the error and try a different approach.",
    `Your workspace is ${input.workspace}; relative paths are resolved there.`,
    input.timezone ? `The user's time zone is ${input.timezone}.` : "",
  ]
    .filter(Boolean)
    .join("\n");
}
