/**
 * Wire-independent helpers the three message translators share: images as URLs, non-image
 * parts as text, system-prompt hoisting, and whether reasoning may be replayed to a target.
 */
import type { AssistantMessage, ContentPart, FilePart, ImagePart, Message } from "../core/messages.js";
import type { ModelTarget } from "./types.js";

/** An image part (or an image file part) as an http(s) or data: URL, when it has one. */
export function imageUrl(part: ImagePart | FilePart): string | undefined {
  if (part.url) return part.url;
  if (part.data) return `data:${part.mimeType};base64,${part.data}`;
  return undefined;
}

export function isImagePart(part: ContentPart): part is ImagePart | FilePart {
  return part.type === "image" || (part.type === "file" && part.mimeType.startsWith("image/") && !part.path);
}

/** A text stand-in for parts a wire API cannot carry (resources, files, links, UI). */
export function partAsText(part: ContentPart): string | undefined {
  switch (part.type) {
    case "text":
      return part.text;
    case "resource":
      return part.text !== undefined ? `[resource ${part.uri}]\n${part.text}` : `[resource ${part.uri} (${part.mimeType ?? "binary"})]`;
    case "resourceLink":
      return `[resource link ${part.uri}${part.name ? ` "${part.name}"` : ""}${part.description ? `: ${part.description}` : ""}]`;
    case "file":
      return `[file ${part.name ?? part.path ?? part.url ?? "attachment"} (${part.mimeType})]`;
    case "image":
      return `[image (${part.mimeType})]`;
    case "ui":
      return undefined;
    default:
      return undefined;
  }
}

/** Concatenated text of parts, with non-text parts described. */
export function partsAsText(parts: readonly ContentPart[]): string {
  return parts
    .map(partAsText)
    .filter((t): t is string => t !== undefined && t !== "")
    .join("\n");
}

/** Splits system messages out (wherever they are) and joins their text, in order. */
export function hoistSystem(messages: readonly Message[]): { system: string; rest: Message[] } {
  // Plain loops: every request's whole history passes here.
  let system = "";
  const rest: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "system") {
      rest.push(m);
      continue;
    }
    let text = "";
    for (let j = 0; j < m.content.length; j++) text += m.content[j]!.text;
    if (text) system = system ? `${system}\n\n${text}` : text;
  }
  return { system, rest };
}

/**
 * Reasoning signatures and encrypted items are only valid for the provider that made them;
 * messages without provenance are assumed to be ours.
 */
export function canReplayReasoning(message: AssistantMessage, target: ModelTarget): boolean {
  return message.provider === undefined || message.provider === target.provider;
}

/** The arguments to send back: the model's own text when it is valid JSON (some servers reject anything else). */
export function argumentsText(raw: string, args: Record<string, unknown>): string {
  try {
    JSON.parse(raw);
    return raw;
  } catch {
    return JSON.stringify(args);
  }
}
