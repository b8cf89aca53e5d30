/**
 * The OTEL_* variables nanobot reads for traces, and the W3C `traceparent` form: what turns
 * tracing on, where spans go, and what is warned about instead of being silently ignored.
 */
import { describe, expect, it } from "vitest";
import { readTracingEnv } from "../../src/core/tracing/otel-env.js";
import { formatTraceparent, parseTraceparent } from "../../src/core/tracing/trace-context.js";

describe("when tracing is on", () => {
  it("is off with no endpoint, and with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none", () => {
    expect(readTracingEnv({})).toEqual({ warnings: [] });
    expect(readTracingEnv({ OTEL_SERVICE_NAME: "svc", OTEL_EXPORTER_OTLP_HEADERS: "a=b" }).settings).toBeUndefined();
    expect(readTracingEnv({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).settings).toBeUndefined();
    expect(readTracingEnv({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).settings).toBeUndefined();
  });

  it("sends to <base>/v1/traces, to the traces endpoint as written, or to localhost for OTEL_TRACES_EXPORTER=otlp", () => {
    expect(readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).settings?.url).toBe("http://collector:4318/v1/traces");
    expect(
      readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t.example/otlp" }).settings?.url,
    ).toBe("https://t.example/otlp");
    expect(readTracingEnv({ OTEL_TRACES_EXPORTER: "otlp" }).settings?.url).toBe("http://localhost:4318/v1/traces");
  });

  it("refuses an endpoint that is not an http(s) URL, naming the variables", () => {
    const { settings, warnings } = readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4317" });
    expect(settings).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining("OTEL_EXPORTER_OTLP_ENDPOINT")]);
  });
});

describe("what the exporter is given", () => {
  it("reads service name, resource attributes, headers, timeout and batching", () => {
    const { settings, warnings } = readTracingEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_SERVICE_NAME: "assistant",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=ignored",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=s%3Dcret,x-team=bots",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=agents",
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "2500",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "64",
    });
    expect(warnings).toEqual([]);
    expect(settings).toEqual({
      url: "http://c:4318/v1/traces",
      headers: { "api-key": "s=cret", "x-team": "agents" },
      resource: { "deployment.environment": "prod", "service.name": "assistant" },
      timeoutMs: 2500,
      scheduleDelayMs: 100,
      maxBatchSize: 64,
      maxQueueSize: 2048,
    });
  });

  it("warns about a protocol, sampler, exporter or number it cannot honour", () => {
    const { settings, warnings } = readTracingEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_SAMPLER: "traceidratio",
      OTEL_TRACES_EXPORTER: "otlp,zipkin",
      OTEL_BSP_SCHEDULE_DELAY: "soon",
    });
    expect(settings?.scheduleDelayMs).toBe(5000);
    expect(warnings).toEqual([
      expect.stringMatching(/^OTEL_TRACES_EXPORTER=zipkin is not supported/),
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported; .*http\/json/),
      expect.stringMatching(/^OTEL_TRACES_SAMPLER=traceidratio is not supported/),
      expect.stringMatching(/^OTEL_BSP_SCHEDULE_DELAY=soon is not a positive integer; using 5000/),
    ]);
  });
});

describe("traceparent", () => {
  it("round-trips version 00 and reads the sampled flag", () => {
    const header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(parseTraceparent(header)).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true });
    expect(formatTraceparent(parseTraceparent(header)!)).toBe(header);
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled).toBe(false);
  });

  it("treats malformed, all-zero and version ff headers as absent", () => {
    for (const bad of [
      undefined,
      "",
      "garbage",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });
});
