/**
 * The OTLP/HTTP JSON exporter against a loopback endpoint: spans nested by the tracer arrive
 * in batches with hex ids and typed attributes; a failing endpoint is reported, never thrown.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { OtlpHttpExporter } from "../../src/core/tracing/otlp-http-exporter.js";
import { activeTraceparent, installSpanExporter, tracingEnabled, withSpan } from "../../src/core/tracing/tracer.js";

interface Endpoint {
  url: string;
  bodies: Array<{ resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> }>;
  close(): Promise<void>;
}

async function endpoint(status: number): Promise<Endpoint> {
  const bodies: Endpoint["bodies"] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      bodies.push(JSON.parse(text) as Endpoint["bodies"][number]);
      res.writeHead(status).end(status === 200 ? "{}" : "collector is down");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function exporterFor(url: string, errors: string[]): OtlpHttpExporter {
  return new OtlpHttpExporter({
    url,
    resource: { "service.name": "unit" },
    scope: { name: "nanobot", version: "0.0.0" },
    timeoutMs: 5000,
    scheduleDelayMs: 60_000,
    maxBatchSize: 2,
    maxQueueSize: 100,
    onError: (message) => errors.push(message),
  });
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe("OtlpHttpExporter", () => {
  it("sends nested spans in batches of maxBatchSize, with hex ids, kinds and typed attributes", async () => {
    const collector = await endpoint(200);
    cleanup.push(collector.close);
    const errors: string[] = [];
    const exporter = exporterFor(collector.url, errors);
    cleanup.push(installSpanExporter(exporter));
    expect(tracingEnabled()).toBe(true);

    let inner = "";
    await withSpan("outer", { attributes: { count: 3, ratio: 0.5, ok: true, tags: ["a", "b"], none: undefined } }, () =>
      withSpan("inner", { kind: 3 }, async () => {
        inner = activeTraceparent() ?? "";
      }),
    );
    await expect(withSpan("broken", {}, () => Promise.reject(new TypeError("bad input")))).rejects.toThrow("bad input");
    await exporter.shutdown();

    expect(collector.bodies).toHaveLength(2);
    const spans = collector.bodies.flatMap((b) => b.resourceSpans[0]!.scopeSpans[0]!.spans);
    expect(spans.map((s) => s.name)).toEqual(["inner", "outer", "broken"]);
    const [innerSpan, outerSpan, broken] = spans as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
    expect(innerSpan.parentSpanId).toBe(outerSpan.spanId);
    expect(innerSpan.traceId).toBe(outerSpan.traceId);
    expect(outerSpan.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(inner).toBe(`00-${String(innerSpan.traceId)}-${String(innerSpan.spanId)}-01`);
    expect(innerSpan.kind).toBe(3);
    expect(outerSpan.attributes).toEqual([
      { key: "count", value: { intValue: "3" } },
      { key: "ratio", value: { doubleValue: 0.5 } },
      { key: "ok", value: { boolValue: true } },
      { key: "tags", value: { arrayValue: { values: [{ stringValue: "a" }, { stringValue: "b" }] } } },
    ]);
    expect(broken.parentSpanId).toBeUndefined();
    expect(broken.status).toEqual({ code: 2, message: "bad input" });
    expect(broken.attributes).toContainEqual({ key: "error.type", value: { stringValue: "TypeError" } });
    expect(errors).toEqual([]);
  });

  it("reports a refusing endpoint and goes on", async () => {
    const collector = await endpoint(503);
    cleanup.push(collector.close);
    const errors: string[] = [];
    const exporter = exporterFor(collector.url, errors);
    cleanup.push(installSpanExporter(exporter));
    await withSpan("lost", {}, async () => "fine");
    await exporter.shutdown();
    expect(collector.bodies).toHaveLength(1);
    expect(errors).toEqual([expect.stringMatching(/OTLP export to .* failed: HTTP 503 collector is down/)]);
  });

  it("is a plain call with nothing installed", async () => {
    expect(tracingEnabled()).toBe(false);
    await withSpan("unseen", {}, async (span) => {
      expect(span).toBeUndefined();
      expect(activeTraceparent()).toBeUndefined();
    });
  });
});
