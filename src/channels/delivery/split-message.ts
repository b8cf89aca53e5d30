/**
 * Splitting long replies at a platform's message limit. Cuts fall between paragraphs and
 * fenced code blocks where possible; a code block longer than the limit is cut between lines
 * and each piece is closed and reopened with the same fence, so every chunk renders alone.
 */

interface Block {
  kind: "text" | "code";
  lines: string[];
  /** Code blocks: the opening fence line and the fence that closes it. */
  open?: string;
  close?: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Splits `text` into chunks of at most `limit` characters (limit must be ≥ 16). */
export function splitMessage(text: string, limit: number): string[] {
  if (limit < 16) throw new RangeError("splitMessage: limit must be at least 16");
  if (text.length <= limit) return text.trim() ? [text.trim()] : [];
  const chunks: string[] = [];
  let current: string[] = [];
  let currentLength = -1;
  const flush = (): void => {
    const chunk = current.join("\n").replace(/^\n+/, "").trimEnd();
    if (chunk) chunks.push(chunk);
    current = [];
    currentLength = -1;
  };
  for (const block of parseBlocks(text)) {
    const length = blockLength(block);
    if (currentLength + 1 + length <= limit) {
      current.push(...block.lines);
      currentLength += 1 + length;
      continue;
    }
    flush();
    if (length <= limit) {
      current.push(...block.lines);
      currentLength = length;
    } else {
      for (const piece of block.kind === "code" ? splitCode(block, limit) : splitLines(block.lines, limit)) {
        const trimmed = piece.trimEnd();
        if (trimmed.trim()) chunks.push(trimmed);
      }
    }
  }
  flush();
  return chunks;
}

/**
 * Splits and renders: each chunk is rendered (e.g. to HTML) and, when rendering made it longer
 * than `limit`, split again smaller. `source` is kept for a plain-text fallback.
 */
export function splitRendered(text: string, limit: number, render: (source: string) => string): Array<{ source: string; rendered: string }> {
  const out: Array<{ source: string; rendered: string }> = [];
  const visit = (source: string, splitAt: number): void => {
    for (const chunk of splitMessage(source, splitAt)) {
      const rendered = render(chunk);
      if (rendered.length <= limit || splitAt <= 256 || chunk.length <= 256) out.push({ source: chunk, rendered });
      else visit(chunk, Math.max(256, Math.floor((splitAt * limit) / rendered.length) - 32));
    }
  };
  visit(text, limit);
  return out;
}

function blockLength(block: Block): number {
  return block.lines.reduce((sum, line) => sum + line.length + 1, -1);
}

/** Paragraphs (with their trailing blank lines) and fenced code blocks. */
function parseBlocks(text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const endParagraph = (): void => {
    if (paragraph.length) blocks.push({ kind: "text", lines: paragraph });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      endParagraph();
      const marker = fence[1]!;
      const closing = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
      const body: string[] = [line];
      let closed = false;
      for (i++; i < lines.length; i++) {
        body.push(lines[i]!);
        if (closing.test(lines[i]!)) {
          closed = true;
          break;
        }
      }
      const close = closed ? body[body.length - 1]! : marker;
      blocks.push({ kind: "code", lines: body, open: line, close });
      continue;
    }
    if (line.trim() === "" && paragraph.length && paragraph[paragraph.length - 1]!.trim() !== "") {
      paragraph.push(line);
      continue;
    }
    if (line.trim() !== "" && paragraph.length && paragraph[paragraph.length - 1]!.trim() === "") endParagraph();
    paragraph.push(line);
  }
  endParagraph();
  return blocks;
}

function splitCode(block: Block, limit: number): string[] {
  const open = block.open!;
  const close = block.close!;
  const hasClose = block.lines.length > 1 && block.lines[block.lines.length - 1] === close;
  const inner = block.lines.slice(1, hasClose ? -1 : undefined);
  const budget = limit - open.length - close.length - 2;
  if (budget < 8) return splitLines(block.lines, limit);
  return splitLines(inner, budget).map((piece) => `${open}\n${piece}\n${close}`);
}

/** Packs lines into pieces ≤ limit; a line longer than the limit is cut at a space if it can be. */
function splitLines(lines: readonly string[], limit: number): string[] {
  const pieces: string[] = [];
  let current = "";
  let hasCurrent = false;
  const push = (): void => {
    if (hasCurrent) pieces.push(current);
    current = "";
    hasCurrent = false;
  };
  for (const line of lines) {
    for (const part of cutLine(line, limit)) {
      if (!hasCurrent) {
        current = part;
        hasCurrent = true;
      } else if (current.length + 1 + part.length <= limit) {
        current += `\n${part}`;
      } else {
        push();
        current = part;
        hasCurrent = true;
      }
    }
  }
  push();
  return pieces;
}

/** A line that starts like a fence (after any indentation) would open or close a code block. */
const FENCE_LIKE = /^\s*(`{3}|~{3})/;

function cutLine(line: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = line;
  while (rest.length > limit) {
    const space = rest.lastIndexOf(" ", limit);
    let at = space > limit / 2 ? space : limit;
    let skip = at === space ? 1 : 0;
    // A cut must not turn content (`x = 1 ```js`) into a fence line of its own: move it left.
    while (at > 1 && FENCE_LIKE.test(rest.slice(at + skip))) {
      at--;
      skip = 0;
    }
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + skip);
  }
  parts.push(rest);
  return parts;
}
