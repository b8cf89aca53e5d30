/**
 * Edit-in-place streaming for platforms that can edit a sent message. The first delta posts a
 * preview at once; later deltas are folded into at most one edit per `intervalMs` (platforms
 * rate-limit edits). Previews are best effort; the final, formatted text is the caller's job
 * once `finish()` returns the handle of the posted message.
 */
import { silentLogger } from "../../core/logger.js";
import type { Logger } from "../../core/logger.js";
import type { ChannelClock } from "../clock.js";

export interface StreamSurface<Ref> {
  /** Posts the first preview and returns a handle for editing it. */
  post(text: string): Promise<Ref>;
  edit(ref: Ref, text: string): Promise<void>;
}

export interface StreamEditorOptions {
  intervalMs: number;
  clock: ChannelClock;
  /** Previews longer than this are cut (the final text is split by the caller). */
  previewLimit: number;
  logger?: Logger;
}

export class StreamEditor<Ref> {
  private text = "";
  private shown = "";
  private ref: Ref | undefined;
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private busy: Promise<void> | undefined;
  private cancelTimer: (() => void) | undefined;
  private finished = false;
  private failed = false;
  private readonly logger: Logger;

  constructor(
    private readonly surface: StreamSurface<Ref>,
    private readonly options: StreamEditorOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
  }

  push(delta: string): void {
    if (this.finished) return;
    this.text += delta;
    this.schedule();
  }

  /** Stops previewing and waits for the preview in flight. `ref` is undefined if nothing was posted. */
  async finish(): Promise<{ ref: Ref | undefined; text: string }> {
    this.finished = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.busy;
    return { ref: this.ref, text: this.text };
  }

  private schedule(): void {
    if (this.busy || this.cancelTimer || this.failed) return;
    const wait = this.lastFlushAt + this.options.intervalMs - this.options.clock.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.cancelTimer = this.options.clock.setTimer(() => {
      this.cancelTimer = undefined;
      this.flush();
    }, wait);
  }

  private flush(): void {
    if (this.finished || this.busy) return;
    const preview = this.preview();
    if (preview === this.shown || !preview.trim()) return;
    this.lastFlushAt = this.options.clock.now();
    this.busy = this.show(preview).finally(() => {
      this.busy = undefined;
      if (!this.finished && this.preview() !== this.shown) this.schedule();
    });
  }

  private async show(preview: string): Promise<void> {
    try {
      if (this.ref === undefined) this.ref = await this.surface.post(preview);
      else await this.surface.edit(this.ref, preview);
      this.shown = preview;
    } catch (error) {
      // A failed first post means no preview at all: the final text is then sent normally.
      if (this.ref === undefined) this.failed = true;
      this.logger.warn("stream preview failed", { error: String(error) });
    }
  }

  private preview(): string {
    const limit = this.options.previewLimit;
    return this.text.length <= limit ? this.text : `${this.text.slice(0, limit - 1)}…`;
  }
}
