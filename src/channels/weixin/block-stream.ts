/**
 * `blockStreaming`: WeChat cannot edit, so a streamed reply may instead arrive as a few separate
 * messages. Once `minChars` of new text are buffered, the text up to its last paragraph break
 * outside a code block goes out as one block; at most `maxMessages - 1` blocks, so the end of the
 * reply always has its own message. A block WeChat refuses turns blocks off for that reply.
 */
export interface BlockStreamOptions {
  minChars: number;
  maxMessages: number;
  /** Sends one block; `index` counts the blocks of the stream. */
  send(chatId: string, streamId: string, index: number, text: string): Promise<void>;
  onError(error: unknown): void;
}

interface StreamState {
  buffer: string;
  /** Characters of `buffer` already sent as blocks. */
  consumed: number;
  blocks: number;
  disabled: boolean;
}

const MAX_BLOCK = 1800;

/** Where a block may end: the last paragraph break with every code fence before it closed. */
export function blockCut(text: string, limit = MAX_BLOCK): number {
  let cut = -1;
  let fences = 0;
  const window = text.slice(0, limit);
  for (let i = 0; i < window.length; i++) {
    if (window.startsWith("```", i)) {
      fences++;
      i += 2;
    } else if (window.startsWith("\n\n", i) && fences % 2 === 0) cut = i;
  }
  return cut;
}

export class BlockStreamer {
  private readonly streams = new Map<string, StreamState>();

  constructor(private readonly options: BlockStreamOptions) {}

  async delta(chatId: string, streamId: string, delta: string): Promise<void> {
    const state = this.streams.get(streamId) ?? { buffer: "", consumed: 0, blocks: 0, disabled: false };
    this.streams.set(streamId, state);
    state.buffer += delta;
    if (state.disabled || state.blocks >= this.options.maxMessages - 1) return;
    const pending = state.buffer.slice(state.consumed);
    if (pending.length < this.options.minChars) return;
    const cut = blockCut(pending);
    if (cut <= 0) return;
    const block = pending.slice(0, cut).trim();
    try {
      await this.options.send(chatId, streamId, state.blocks, block);
      state.blocks++;
      state.consumed += cut;
    } catch (error) {
      state.disabled = true;
      this.options.onError(error);
    }
  }

  /** What is left of the whole reply `content` once the blocks sent are taken off. */
  finish(streamId: string, content: string): string {
    const state = this.streams.get(streamId);
    this.streams.delete(streamId);
    if (!state?.consumed) return content;
    const sent = state.buffer.slice(0, state.consumed);
    return content.startsWith(sent) ? content.slice(state.consumed) : content;
  }
}
