/**
 * Core messages → OpenAI Responses `input` items. With `store: false` the server keeps no
 * state, so reasoning items (with their encrypted content) travel back verbatim from
 * `ReasoningPart.providerData`; system prompts become `instructions`.
 */
import type { Message, UserContentPart } from "../core/messages.js";
import { argumentsText, canReplayReasoning, hoistSystem, imageUrl, isImagePart, partAsText, partsAsText } from "./content.js";
import type { ModelTarget } from "./types.js";

export type ResponsesContentPart =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail: "auto" }
  | { type: "input_file"; filename: string; file_data: string };

export type ResponsesInputItem =
  | { role: "user"; content: ResponsesContentPart[] }
  | { role: "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string }
  | Record<string, unknown>;

function userContent(parts: readonly UserContentPart[]): ResponsesContentPart[] {
  const out: ResponsesContentPart[] = [];
  for (const part of parts) {
    if (isImagePart(part)) {
      const url = imageUrl(part);
      if (url) {
        out.push({ type: "input_image", image_url: url, detail: "auto" });
        continue;
      }
    }
    if (part.type === "file" && part.mimeType === "application/pdf" && part.data) {
      out.push({ type: "input_file", filename: part.name ?? "file.pdf", file_data: `data:${part.mimeType};base64,${part.data}` });
      continue;
    }
    const text = partAsText(part);
    if (text) out.push({ type: "input_text", text });
  }
  return out;
}

export function toResponsesInput(messages: readonly Message[], target: ModelTarget): { instructions?: string; input: ResponsesInputItem[] } {
  const { system, rest } = hoistSystem(messages);
  const input: ResponsesInputItem[] = [];
  let pendingImages: ResponsesContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    input.push({ role: "user", content: [{ type: "input_text", text: "Images returned by the tool calls above:" }, ...pendingImages] });
    pendingImages = [];
  };
  for (const m of rest) {
    if (m.role !== "tool") flushImages();
    switch (m.role) {
      case "user":
        input.push({ role: "user", content: userContent(m.content) });
        break;
      case "assistant": {
        const replay = canReplayReasoning(m, target);
        let text = "";
        const flushText = () => {
          if (text) input.push({ role: "assistant", content: text });
          text = "";
        };
        for (const p of m.content) {
          if (p.type === "text") text += p.text;
          else if (p.type === "reasoning") {
            if (replay && p.providerData) {
              flushText();
              input.push(p.providerData);
            }
          } else if (p.type === "toolCall") {
            flushText();
            input.push({ type: "function_call", call_id: p.id, name: p.name, arguments: argumentsText(p.rawArguments, p.arguments) });
          }
        }
        flushText();
        break;
      }
      case "tool": {
        const images = m.content.filter(isImagePart);
        const text = partsAsText(m.content.filter((p) => !isImagePart(p)));
        input.push({ type: "function_call_output", call_id: m.toolCallId, output: text || (images.length ? "(see images below)" : "") });
        for (const img of images) {
          const url = imageUrl(img);
          if (url) pendingImages.push({ type: "input_image", image_url: url, detail: "auto" });
        }
        break;
      }
    }
  }
  flushImages();
  return system ? { instructions: system, input } : { input };
}
