/**
 * Some OpenAI-compatible servers (DeepSeek-R1 distills, Qwen, MiniMax via vLLM/Ollama) put the
 * reasoning inline as `<think>…</think>` in the text. This splits it out while streaming; a
 * tag may be cut across chunks, so only a trailing fragment that could start a tag is held back.
 */
export interface Piece {
  kind: "text" | "reasoning";
  text: string;
}

const OPEN = "<think>";
const CLOSE = "</think>";

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

export class ThinkSplitter {
  private inside = false;
  private held = "";

  /** Feeds one text delta; returns the pieces that can be emitted now. */
  push(delta: string): Piece[] {
    let text = this.held + delta;
    this.held = "";
    const out: Piece[] = [];
    for (;;) {
      const tag = this.inside ? CLOSE : OPEN;
      const at = text.indexOf(tag);
      if (at >= 0) {
        this.emit(out, text.slice(0, at));
        text = text.slice(at + tag.length);
        this.inside = !this.inside;
        continue;
      }
      const keep = partialTagLength(text, tag);
      this.emit(out, text.slice(0, text.length - keep));
      this.held = text.slice(text.length - keep);
      return out;
    }
  }

  /** Releases any held-back fragment at the end of the stream. */
  flush(): Piece[] {
    const out: Piece[] = [];
    this.emit(out, this.held);
    this.held = "";
    return out;
  }

  private emit(out: Piece[], text: string): void {
    if (text) out.push({ kind: this.inside ? "reasoning" : "text", text });
  }
}
