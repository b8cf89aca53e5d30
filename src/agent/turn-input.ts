/**
 * A turn's user message, held to the oversized-input rule (engine/governance/oversized-input)
 * before it is stored and sent: a message too large for the model's window is cut to its
 * beginning and end, the full text is saved under the session's folder (named in the marker
 * the model sees), and the caller gets a warning to pass on to the user. Nothing is dropped
 * silently, and the provider never sees a message it must refuse as too long.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { errorMessage } from "../core/errors.js";
import { userMessage } from "../core/message-helpers.js";
import type { UserContentPart, UserMessage } from "../core/messages.js";
import { limitUserInput, mayExceedInputLimit, truncationNotice } from "../engine/governance/oversized-input.js";
import { sharedTokenEstimator } from "../engine/tokens/estimator.js";
import type { AgentProfile, Runtime } from "./runtime.js";

export interface TurnInput {
  message: UserMessage;
  /** Set when the message was cut: one user-facing sentence. */
  warning?: string;
}

type Profile = Pick<AgentProfile, "contextWindow" | "maxTokens" | "modelRef">;

export async function prepareTurnInput(runtime: Runtime, profile: Profile, sessionKey: string, content: string | UserContentPart[]): Promise<TurnInput> {
  // Almost every message is far below the limit: decided by its length, at no cost to the turn.
  if (!mayExceedInputLimit(content, profile.contextWindow, profile.maxTokens)) return { message: userMessage(content) };
  const options = { estimator: sharedTokenEstimator(profile.modelRef), contextWindow: profile.contextWindow, maxTokens: profile.maxTokens };
  const path = join(runtime.sessionDir(sessionKey), "inputs", `${Date.now()}-${randomBytes(4).toString("hex")}.txt`);
  let limited = limitUserInput(content, { ...options, savedAt: path });
  const truncation = limited.truncation;
  if (!truncation) return { message: userMessage(content) };
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, fullText(content), { encoding: "utf8", mode: 0o600 });
  } catch (error) {
    // The marker must not point at a file that is not there.
    runtime.logger.warn("could not save the full oversized message", { sessionKey, path, error: errorMessage(error) });
    limited = limitUserInput(content, options);
  }
  runtime.logger.warn("user message truncated to fit the context window", { sessionKey, ...truncation });
  return { message: userMessage(limited.content), warning: truncationNotice(truncation) };
}

function fullText(content: string | UserContentPart[]): string {
  return typeof content === "string" ? content : content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n");
}
