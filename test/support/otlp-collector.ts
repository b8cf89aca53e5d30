/**
 * An OTLP/HTTP (JSON) collector stand-in on loopback: keeps every `POST /v1/traces` body, so a
 * test can read the spans nanobot exported (`OTEL_EXPORTER_OTLP_ENDPOINT=<url>`).
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export type OtlpValue = { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: OtlpValue[] } };
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
  status: { code: number; message?: string };
}
export interface ExportRequest {
  headers: IncomingHttpHeaders;
  body: {
    resourceSpans: Array<{
      resource: { attributes: Array<{ key: string; value: OtlpValue }> };
      scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }>;
    }>;
  };
}

export interface OtlpCollector {
  url: string;
  exports: ExportRequest[];
  spans(): OtlpSpan[];
  /** The spans once `ready(spans)` holds (checked as exports arrive), or throws after `ms`. */
  waitFor(ready: (spans: OtlpSpan[]) => boolean, ms?: number): Promise<OtlpSpan[]>;
  close(): Promise<void>;
}

/** The spans of one trace. */
export function traceOf(spans: readonly OtlpSpan[], traceId: string): OtlpSpan[] {
  return spans.filter((s) => s.traceId === traceId);
}

export async function startCollector(): Promise<OtlpCollector> {
  const exports: ExportRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || req.headers["content-type"] !== "application/json") {
        res.writeHead(415).end();
        return;
      }
      exports.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportRequest["body"] });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const spans = (): OtlpSpan[] => exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans,
    async waitFor(ready, ms = 30_000) {
      const start = Date.now();
      while (!ready(spans())) {
        if (Date.now() - start > ms) throw new Error(`the collector did not get the spans in ${ms} ms (${spans().length} spans: ${[...new Set(spans().map((s) => s.name))].join(", ")})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A span's attributes as plain values (ints as numbers, arrays as arrays). */
export function spanAttributes(span: OtlpSpan): Record<string, unknown> {
  const plain = (v: OtlpValue): unknown =>
    v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values.map(plain);
  return Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));
}
