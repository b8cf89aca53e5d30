/**
 * The process's tracer: spans nested through AsyncLocalStorage and handed, once ended, to the
 * installed exporter. With no exporter installed (no OTEL_* configuration) `withSpan` only
 * calls its function: no span objects, no ids, no async context, nothing loaded.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { errorMessage } from "../errors.js";
import { formatTraceparent, newSpanId, newTraceId } from "./trace-context.js";
import type { SpanContext } from "./trace-context.js";

export type AttributeValue = string | number | boolean | readonly string[];
export type Attributes = Record<string, AttributeValue | undefined>;

/** OTLP's span kinds (the numbers are the wire values). */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const;
export type SpanKindValue = (typeof SpanKind)[keyof typeof SpanKind];

/** OTLP status codes: unset, ok, error. */
export type StatusCode = 0 | 1 | 2;

export interface FinishedSpan {
  name: string;
  kind: SpanKindValue;
  context: SpanContext;
  parentSpanId?: string;
  /** Unix time in nanoseconds. */
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  status: { code: StatusCode; message?: string };
}

/** Where ended spans go (the OTLP exporter, or a test's list). */
export interface SpanExporter {
  export(span: FinishedSpan): void;
  /** Sends what is pending and stops. */
  shutdown(): Promise<void>;
}

function nowNs(): bigint {
  // performance.now() is monotonic; anchored to timeOrigin it is wall time with sub-ms precision.
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}

export class Span {
  private readonly attributes: Record<string, AttributeValue> = {};
  private readonly startNs = nowNs();
  private status: FinishedSpan["status"] = { code: 0 };
  private ended = false;

  constructor(
    readonly name: string,
    readonly kind: SpanKindValue,
    readonly context: SpanContext,
    private readonly sink: SpanExporter,
    private readonly parentSpanId?: string,
  ) {}

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (value !== undefined) this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const [key, value] of Object.entries(attributes)) this.setAttribute(key, value);
    return this;
  }

  /** Marks the span failed: status error and `error.type` (the error's class unless given). */
  fail(error: unknown, type?: string): this {
    const name = type ?? (error instanceof Error ? error.constructor.name : undefined) ?? "_OTHER";
    this.setAttribute("error.type", name === "Error" ? "_OTHER" : name);
    this.status = { code: 2, message: error === undefined ? undefined : errorMessage(error) };
    return this;
  }

  /** True once `fail` was called. */
  get failed(): boolean {
    return this.status.code === 2;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.context.sampled) return;
    this.sink.export({
      name: this.name,
      kind: this.kind,
      context: this.context,
      ...(this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      startNs: this.startNs,
      endNs: nowNs(),
      attributes: this.attributes,
      status: this.status,
    });
  }
}

interface Active {
  context: SpanContext;
  /** Absent for a remote parent (a `traceparent` a client sent). */
  span?: Span;
}

let exporter: SpanExporter | undefined;
let storage: AsyncLocalStorage<Active> | undefined;

/** True when spans are recorded (an exporter is installed). */
export function tracingEnabled(): boolean {
  return exporter !== undefined;
}

/** Installs the exporter for the process; the returned function removes it again (if still current). */
export function installSpanExporter(next: SpanExporter): () => void {
  exporter = next;
  storage ??= new AsyncLocalStorage<Active>();
  return () => {
    if (exporter === next) exporter = undefined;
  };
}

export interface SpanOptions {
  kind?: SpanKindValue;
  attributes?: Attributes;
  /** The parent, instead of the active span; `null` starts a new trace. */
  parent?: SpanContext | null;
}

/**
 * Runs `fn` inside a new span, the active one for everything `fn` awaits. A throw marks the
 * span failed and is rethrown; the span ends when `fn` settles. Without tracing `fn` gets
 * `undefined` and runs as it is.
 */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  // Off: the very same call, not even an extra promise.
  if (!exporter || !storage) return fn(undefined);
  return runInSpan(exporter, storage, name, options, fn);
}

async function runInSpan<T>(
  sink: SpanExporter,
  context: AsyncLocalStorage<Active>,
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const parent = options.parent === undefined ? context.getStore()?.context : (options.parent ?? undefined);
  const ids: SpanContext = { traceId: parent?.traceId ?? newTraceId(), spanId: newSpanId(), sampled: parent?.sampled ?? true };
  const span = new Span(name, options.kind ?? SpanKind.internal, ids, sink, parent?.spanId);
  if (options.attributes) span.setAttributes(options.attributes);
  try {
    return await context.run({ context: ids, span }, () => fn(span));
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    span.end();
  }
}

/** Runs `fn` with `parent` (a caller's `traceparent`) as the active context. */
export function withRemoteParent<T>(parent: SpanContext | undefined, fn: () => T): T {
  if (!parent || !storage || !exporter) return fn();
  return storage.run({ context: parent }, fn);
}

/** The active span's context (or the remote parent's), to start a span later in another async chain. */
export function activeSpanContext(): SpanContext | undefined {
  return exporter ? storage?.getStore()?.context : undefined;
}

/** The `traceparent` header for an outgoing request made in the active span, if any. */
export function activeTraceparent(): string | undefined {
  const context = activeSpanContext();
  return context ? formatTraceparent(context) : undefined;
}

/** Adds attributes to the active span (a layer below the one that started it knows them). */
export function annotateActiveSpan(attributes: Attributes): void {
  if (exporter) storage?.getStore()?.span?.setAttributes(attributes);
}
