/**
 * Ended spans to an OTLP/HTTP endpoint in the JSON encoding (`POST …/v1/traces`,
 * `application/json`): batched, sent every `scheduleDelayMs` or when a batch is full, and
 * flushed on shutdown. A failed export is logged and dropped; it never reaches a turn.
 */
import { errorMessage } from "../errors.js";
import type { AttributeValue, FinishedSpan, SpanExporter } from "./tracer.js";

export interface OtlpHttpExporterOptions {
  /** The full traces URL (`…/v1/traces`). */
  url: string;
  headers?: Record<string, string>;
  /** Resource attributes; `service.name` among them. */
  resource: Record<string, string>;
  scope: { name: string; version: string };
  timeoutMs: number;
  scheduleDelayMs: number;
  maxBatchSize: number;
  /** Spans kept while the endpoint is slow; the oldest are dropped beyond this. */
  maxQueueSize: number;
  fetch?: typeof fetch;
  onError?: (message: string) => void;
}

type OtlpValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: OtlpValue[] } };

function otlpValue(value: AttributeValue): OtlpValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
}

function otlpAttributes(attributes: Record<string, AttributeValue>): Array<{ key: string; value: OtlpValue }> {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: otlpValue(value) }));
}

function otlpSpan(span: FinishedSpan): Record<string, unknown> {
  return {
    traceId: span.context.traceId,
    spanId: span.context.spanId,
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: span.startNs.toString(),
    endTimeUnixNano: span.endNs.toString(),
    attributes: otlpAttributes(span.attributes),
    status: { code: span.status.code, ...(span.status.message ? { message: span.status.message } : {}) },
  };
}

export class OtlpHttpExporter implements SpanExporter {
  private queue: FinishedSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: OtlpHttpExporterOptions) {}

  export(span: FinishedSpan): void {
    if (this.stopped) return;
    this.queue.push(span);
    if (this.queue.length > this.options.maxQueueSize) this.queue.shift();
    if (this.queue.length >= this.options.maxBatchSize) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.scheduleDelayMs).unref();
  }

  /** Sends everything queued now; resolves when every export in flight has settled. */
  async forceFlush(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.inFlight]);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.stopped = true;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatchSize);
      const sending = this.send(batch).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  private async send(batch: FinishedSpan[]): Promise<void> {
    const { options } = this;
    const body = {
      resourceSpans: [
        {
          resource: { attributes: otlpAttributes(options.resource) },
          scopeSpans: [{ scope: options.scope, spans: batch.map(otlpSpan) }],
        },
      ],
    };
    try {
      const res = await (options.fetch ?? fetch)(options.url, {
        method: "POST",
        headers: { ...options.headers, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      // The body is drained so the connection can be reused.
      const text = await res.text();
      if (!res.ok) options.onError?.(`OTLP export to ${options.url} failed: HTTP ${res.status} ${text.slice(0, 200)}`);
    } catch (err) {
      options.onError?.(`OTLP export to ${options.url} failed: ${errorMessage(err)}`);
    }
  }
}
