/**
 * Turns tracing on for the process when the OTEL_* variables ask for it. Unconfigured, nothing
 * is created: the exporter module is not even loaded, and `withSpan` stays a plain call.
 */
import { packageVersion } from "../version.js";
import { readTracingEnv } from "./otel-env.js";
import { installSpanExporter } from "./tracer.js";

export interface TracingHandle {
  /** True when spans are exported. */
  readonly enabled: boolean;
  /** Where they go (the traces URL), when enabled. */
  readonly endpoint?: string;
  /** Sends the spans still queued. */
  flush(): Promise<void>;
  /** Flushes and uninstalls. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  env: Record<string, string | undefined>;
  warn?: (message: string) => void;
  /** Injected `fetch` for the exporter (tests, proxies). */
  fetch?: typeof fetch;
}

const OFF: TracingHandle = { enabled: false, flush: async () => undefined, shutdown: async () => undefined };

export async function startTracing(options: StartTracingOptions): Promise<TracingHandle> {
  const { settings, warnings } = readTracingEnv(options.env);
  for (const w of warnings) options.warn?.(w);
  if (!settings) return OFF;
  const { OtlpHttpExporter } = await import("./otlp-http-exporter.js");
  const exporter = new OtlpHttpExporter({
    ...settings,
    scope: { name: "nanobot", version: packageVersion() },
    ...(options.fetch ? { fetch: options.fetch } : {}),
    onError: (message) => options.warn?.(message),
  });
  const uninstall = installSpanExporter(exporter);
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    endpoint: settings.url,
    flush: () => exporter.forceFlush(),
    shutdown: () =>
      (stopping ??= (async () => {
        uninstall();
        await exporter.shutdown();
      })()),
  };
}
