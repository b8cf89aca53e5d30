/**
 * The synthetic messages the loop sends (only in the request copy, never persisted) to recover
 * from blank answers, cut-off answers and the tool-round limit.
 */
import { messageId } from "../../core/ids.js";
import type { AssistantMessage, UserMessage } from "../../core/messages.js";

export const MAX_LENGTH_CONTINUATIONS = 3;
export const MAX_INJECTIONS_PER_DRAIN = 3;
export const MAX_INJECTION_CYCLES = 5;

function note(text: string): UserMessage {
  return { id: messageId(), role: "user", content: [{ type: "text", text }], meta: { synthetic: true } };
}

export const ANSWER_PROMPT =
  "Your last reply was empty. Reply now with your final answer to the user, based on what you already know.";
export const CONTINUE_PROMPT =
  "Your reply was cut off by the output limit. Continue exactly where it stopped, without repeating anything.";
export const FINALIZE_PROMPT =
  "You have reached the limit of tool calls for this turn. Do not call tools. Reply now with your best final answer, " +
  "saying what is done and what remains.";

export const SCHEMA_PROMPT =
  "Your answer does not match the required JSON schema. Reply with only the corrected JSON, nothing else. Problem: ";

export const answerRequest = (): UserMessage => note(ANSWER_PROMPT);
export const continueRequest = (): UserMessage => note(CONTINUE_PROMPT);
export const finalizeRequest = (): UserMessage => note(FINALIZE_PROMPT);
export const schemaRequest = (problem: string): UserMessage => note(SCHEMA_PROMPT + problem);

/** The partial answer so far, replayed before a continuation request. */
export function partialAnswer(text: string): AssistantMessage {
  return { id: messageId(), role: "assistant", content: [{ type: "text", text }], meta: { synthetic: true } };
}
