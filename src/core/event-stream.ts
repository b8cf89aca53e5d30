/**
 * One push-based stream primitive for provider streams, engine events and channel streams.
 *
 * The producer calls `push()` for each event and `end(result)` once. Consumers iterate the
 * events (`for await`) and/or await `result()`. If the producer fails, `fail(err)` pushes the
 * error event made by `toErrorEvent` and rejects `result()` with the error, so an iterating
 * consumer always sees why the stream ended.
 *
 * Events are buffered until consumed; a single consumer iterates. Non-streaming APIs simply
 * await `result()` (the stream drained), so there is one code path for both.
 */
export class EventStream<E, R> implements AsyncIterable<E> {
  private readonly queue: E[] = [];
  private waiter: ((r: IteratorResult<E>) => void) | undefined;
  private done = false;
  private readonly resultPromise: Promise<R>;
  private resolveResult!: (r: R) => void;
  private rejectResult!: (e: unknown) => void;
  /** Observers (`subscribe`); made on the first, as most streams have none. */
  private listeners: Set<(event: E) => void> | undefined;
  /** Set by `pipe()`: takes each event in place of the queue. */
  private sink: ((event: E) => void) | undefined;

  constructor(private readonly toErrorEvent: (err: unknown) => E) {
    this.resultPromise = new Promise<R>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
    // A consumer that only iterates must not trigger an unhandled rejection.
    this.resultPromise.catch(() => undefined);
  }

  /**
   * Runs `producer` and wires its outcome to the stream: its return value ends the stream,
   * a throw fails it. The producer receives the stream to push events into.
   */
  static run<E, R>(
    toErrorEvent: (err: unknown) => E,
    producer: (stream: EventStream<E, R>) => Promise<R>,
  ): EventStream<E, R> {
    const stream = new EventStream<E, R>(toErrorEvent);
    // Deferred so the caller can attach listeners before the first event.
    queueMicrotask(() => {
      producer(stream).then(
        (result) => stream.end(result),
        (err: unknown) => stream.fail(err),
      );
    });
    return stream;
  }

  get ended(): boolean {
    return this.done;
  }

  push(event: E): void {
    if (this.done) return;
    if (this.listeners) {
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {
          // A broken observer must not break the producer.
        }
      }
    }
    if (this.sink) {
      this.sink(event);
      return;
    }
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter({ value: event, done: false });
    } else {
      this.queue.push(event);
    }
  }

  end(result: R): void {
    if (this.done) return;
    this.done = true;
    this.resolveResult(result);
    this.wake();
  }

  fail(err: unknown): void {
    if (this.done) return;
    this.push(this.toErrorEvent(err));
    this.done = true;
    this.rejectResult(err);
    this.wake();
  }

  /** Observes every event as it is pushed, independent of iteration. Returns an unsubscribe. */
  subscribe(listener: (event: E) => void): () => void {
    const listeners = (this.listeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /**
   * The single consumer's alternative to iterating: `consumer` gets each event synchronously as
   * it is pushed (those already queued first), with no promise per event and nothing buffered.
   * A decorator that forwards an inner stream's events pays one hop per event this way instead
   * of an iterator's promise and microtask. Resolves once the stream has ended, whether the
   * producer succeeded or failed (`result()` tells which); rejects with what `consumer` threw,
   * after which the rest of the events are dropped, as they would be by a `for await` loop
   * that threw.
   */
  pipe(consumer: (event: E) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const sink = (event: E): void => {
        try {
          consumer(event);
        } catch (err) {
          this.sink = () => undefined;
          reject(err);
        }
      };
      this.sink = sink;
      for (let event = this.queue.shift(); event !== undefined && this.sink === sink; event = this.queue.shift()) sink(event);
      this.queue.length = 0;
      this.resultPromise.then(
        () => resolve(),
        () => resolve(),
      );
    });
  }

  /** Resolves with the final result, or rejects with the producer's error. */
  result(): Promise<R> {
    return this.resultPromise;
  }

  private wake(): void {
    const waiter = this.waiter;
    if (waiter && this.queue.length === 0) {
      this.waiter = undefined;
      waiter({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<E> {
    return {
      next: (): Promise<IteratorResult<E>> => {
        const next = this.queue.shift();
        if (next !== undefined) return Promise.resolve({ value: next, done: false });
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: (): Promise<IteratorResult<E>> => {
        this.queue.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
