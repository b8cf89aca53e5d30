/**
 * An OTLP/HTTP (JSON) collector stand-in on loopback: keeps the spans of every `POST /v1/traces`
 * a worker exports (OTEL_EXPORTER_OTLP_ENDPOINT pointed at `url`).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

interface ExportBody {
  resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

export interface Collector {
  url: string;
  spans(): OtlpSpan[];
  /** The spans once `ready(spans)` holds (checked as exports arrive), or throws after `ms`. */
  waitFor(ready: (spans: OtlpSpan[]) => boolean, ms?: number): Promise<OtlpSpan[]>;
  close(): Promise<void>;
}

/** The spans of one trace. */
export function traceOf(spans: readonly OtlpSpan[], traceId: string): OtlpSpan[] {
  return spans.filter((s) => s.traceId === traceId);
}

export async function startCollector(): Promise<Collector> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || req.headers["content-type"] !== "application/json") {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportBody;
      for (const r of body.resourceSpans ?? []) for (const s of r.scopeSpans ?? []) spans.push(...(s.spans ?? []));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    async waitFor(ready, ms = 30_000) {
      const start = Date.now();
      while (!ready(spans)) {
        if (Date.now() - start > ms) throw new Error(`the collector did not get the spans in ${ms} ms (${spans.length} spans: ${[...new Set(spans.map((s) => s.name))].join(", ")})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
