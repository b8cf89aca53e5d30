/**
 * Splits a byte stream into newline-terminated lines without ever holding more than
 * `maxLineBytes` of one line. A longer line is not buffered: only its first and last bytes are
 * kept (enough to find its JSON-RPC id) and it is reported as oversized when its newline comes,
 * so one huge message cannot take the stream down.
 */

/** Bytes kept from each end of an oversized line. */
const EDGE_BYTES = 512;

export interface OversizedLine {
  bytes: number;
  head: string;
  tail: string;
}

export interface LineReaderHandlers {
  line(text: string): void;
  oversized(info: OversizedLine): void;
}

export class BoundedLineReader {
  private parts: Buffer[] = [];
  private size = 0;
  /** Set while the current line is over the limit. */
  private over: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineReaderHandlers,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.append(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  clear(): void {
    this.parts = [];
    this.size = 0;
    this.over = undefined;
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.over) {
      this.over.bytes += piece.length;
      this.over.tail = Buffer.concat([this.over.tail, piece]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.size + piece.length <= this.maxLineBytes) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    const whole = Buffer.concat([...this.parts, piece]);
    this.over = { bytes: whole.length, head: Buffer.from(whole.subarray(0, EDGE_BYTES)), tail: Buffer.from(whole.subarray(-EDGE_BYTES)) };
    this.parts = [];
    this.size = 0;
  }

  private endLine(): void {
    const over = this.over;
    if (over) {
      this.over = undefined;
      this.handlers.oversized({ bytes: over.bytes, head: over.head.toString("utf8"), tail: over.tail.toString("utf8").replace(/\r$/, "") });
      return;
    }
    const text = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (text.trim() !== "") this.handlers.line(text);
  }
}
