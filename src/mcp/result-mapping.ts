/**
 * Translates MCP results (tool calls, prompts, resource reads) into core content parts at the
 * edge, so nothing above speaks the MCP wire format.
 */
import type {
  CallToolResult,
  ContentBlock,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolResultContentPart } from "../core/messages.js";
import type { ToolOutput } from "../tools/tool.js";

type ResourceContents = ReadResourceResult["contents"][number];

/** MCP-UI resources are rendered by capable faces instead of being read by the model. */
function isUiResource(uri: string): boolean {
  return uri.startsWith("ui://");
}

export function mapResourceContents(contents: ResourceContents): ToolResultContentPart {
  const text = "text" in contents && typeof contents.text === "string" ? contents.text : undefined;
  const blob = "blob" in contents && typeof contents.blob === "string" ? contents.blob : undefined;
  if (isUiResource(contents.uri)) {
    // MCP-UI sends HTML as text or as a base64 blob; the page is kept as text either way.
    const content = text ?? (blob !== undefined ? Buffer.from(blob, "base64").toString("utf8") : "");
    return { type: "ui", uri: contents.uri, mimeType: contents.mimeType ?? "text/html", content };
  }
  if (blob !== undefined && contents.mimeType?.startsWith("image/")) {
    return { type: "image", mimeType: contents.mimeType, data: blob };
  }
  return {
    type: "resource",
    uri: contents.uri,
    ...(contents.mimeType ? { mimeType: contents.mimeType } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(blob !== undefined ? { blob } : {}),
  };
}

export function mapContentBlock(block: ContentBlock): ToolResultContentPart {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", mimeType: block.mimeType, data: block.data };
    case "audio":
      return { type: "file", mimeType: block.mimeType, data: block.data };
    case "resource":
      return mapResourceContents(block.resource);
    case "resource_link":
      return {
        type: "resourceLink",
        uri: block.uri,
        name: block.name,
        ...(block.mimeType ? { mimeType: block.mimeType } : {}),
        ...(block.description ? { description: block.description } : {}),
      };
    default: {
      // A block type newer than this client: keep it visible rather than dropping it.
      const unknown: { type: string } = block;
      return { type: "text", text: JSON.stringify(unknown) };
    }
  }
}

/**
 * Text, images, resources and links become parts; `structuredContent` is kept and, when the
 * server sent no text, rendered as JSON text so the model still sees it.
 */
export function mapCallToolResult(result: CallToolResult): Exclude<ToolOutput, string> {
  const blocks = result.content ?? [];
  const content = blocks.map(mapContentBlock);
  const structured = result.structuredContent;
  if (structured !== undefined && !content.some((p) => p.type === "text")) {
    content.push({ type: "text", text: JSON.stringify(structured) });
  }
  return {
    content,
    ...(result.isError === true ? { isError: true } : {}),
    ...(structured !== undefined ? { structuredContent: structured } : {}),
    ...(blocks.some(asksSkipTruncation) ? { skipTruncation: true } : {}),
  };
}

/** The Go nanobot's content `_meta` key that keeps a large tool result whole. */
export const SKIP_TRUNCATION_META_KEY = "ai.nanobot.meta/skip-truncation";

function asksSkipTruncation(block: ContentBlock): boolean {
  const meta = (block as { _meta?: Record<string, unknown> })._meta;
  return meta?.[SKIP_TRUNCATION_META_KEY] === true;
}

/** A prompt's messages as parts; text is prefixed by its role when there is more than one message. */
export function mapPromptResult(result: GetPromptResult): Exclude<ToolOutput, string> {
  const many = result.messages.length > 1;
  const content = result.messages.map((m): ToolResultContentPart => {
    const part = mapContentBlock(m.content);
    return many && part.type === "text" ? { type: "text", text: `${m.role}: ${part.text}` } : part;
  });
  return { content };
}

/** The prompt rendered as plain text (instructions, UI prompt actions). */
export function promptText(result: GetPromptResult): string {
  return result.messages
    .map((m) => {
      const c = m.content;
      if (c.type === "text") return c.text;
      if (c.type === "resource" && "text" in c.resource && typeof c.resource.text === "string") return c.resource.text;
      return "";
    })
    .filter((t) => t !== "")
    .join("\n\n");
}

export function mapReadResourceResult(result: ReadResourceResult): Exclude<ToolOutput, string> {
  return { content: result.contents.map(mapResourceContents) };
}
