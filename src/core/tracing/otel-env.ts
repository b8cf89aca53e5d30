/**
 * The standard OpenTelemetry environment variables, read for traces. Tracing is on only when
 * an OTLP endpoint is named (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`)
 * or `OTEL_TRACES_EXPORTER=otlp` asks for the default one; `OTEL_SDK_DISABLED=true` and
 * `OTEL_TRACES_EXPORTER=none` turn it off. What nanobot cannot do comes back as a warning.
 */

type Env = Record<string, string | undefined>;

export interface TracingSettings {
  /** The traces URL (`…/v1/traces`). */
  url: string;
  headers: Record<string, string>;
  resource: Record<string, string>;
  timeoutMs: number;
  scheduleDelayMs: number;
  maxBatchSize: number;
  maxQueueSize: number;
}

export interface TracingEnv {
  settings?: TracingSettings;
  /** One line per variable that is set but not (fully) honoured, naming it and why. */
  warnings: string[];
}

const DEFAULT_ENDPOINT = "http://localhost:4318";
const SUPPORTED_SAMPLERS = new Set(["always_on", "parentbased_always_on"]);

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** `key=value,key2=value2` with percent-encoded values (the W3C Baggage form the spec uses). */
export function parseKeyValueList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const raw = pair.slice(at + 1).trim();
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // Not valid percent-encoding: keep the text as written.
    }
    if (key) out[key] = decoded;
  }
  return out;
}

function positiveInt(env: Env, name: string, fallback: number, warnings: string[]): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n > 0) return n;
  warnings.push(`${name}=${raw} is not a positive integer; using ${fallback}`);
  return fallback;
}

/** The traces URL: the signal-specific variable as written, else `<base>/v1/traces`. */
function tracesUrl(env: Env): string | undefined {
  const specific = value(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (specific) return specific;
  const base = value(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}

export function readTracingEnv(env: Env): TracingEnv {
  const warnings: string[] = [];
  if (value(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return { warnings };
  const exporters = (value(env, "OTEL_TRACES_EXPORTER") ?? "").toLowerCase().split(",").map((s) => s.trim()).filter(Boolean);
  if (exporters.includes("none")) return { warnings };
  const unsupported = exporters.filter((e) => e !== "otlp");
  if (unsupported.length > 0) warnings.push(`OTEL_TRACES_EXPORTER=${unsupported.join(",")} is not supported (nanobot exports traces over OTLP only); ignored`);
  let url = tracesUrl(env);
  if (!url && exporters.includes("otlp")) url = `${DEFAULT_ENDPOINT}/v1/traces`;
  if (!url) return { warnings };
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    warnings.push(`the OTLP traces endpoint ${url} (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT) is not an http(s) URL; tracing is off`);
    return { warnings };
  }

  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const protocol = value(env, name);
    if (protocol && protocol !== "http/json") warnings.push(`${name}=${protocol} is not supported; nanobot sends OTLP/HTTP with the JSON encoding (http/json)`);
  }
  const sampler = value(env, "OTEL_TRACES_SAMPLER");
  if (sampler && !SUPPORTED_SAMPLERS.has(sampler)) {
    warnings.push(`OTEL_TRACES_SAMPLER=${sampler} is not supported; nanobot records every trace whose parent is sampled (parentbased_always_on)`);
  }

  const resource = parseKeyValueList(value(env, "OTEL_RESOURCE_ATTRIBUTES"));
  resource["service.name"] = value(env, "OTEL_SERVICE_NAME") ?? resource["service.name"] ?? "nanobot";
  const headers = { ...parseKeyValueList(value(env, "OTEL_EXPORTER_OTLP_HEADERS")), ...parseKeyValueList(value(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")) };
  const timeoutName = value(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT";
  const maxQueueSize = positiveInt(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, warnings);
  return {
    settings: {
      url,
      headers,
      resource,
      timeoutMs: positiveInt(env, timeoutName, 10_000, warnings),
      scheduleDelayMs: positiveInt(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000, warnings),
      maxBatchSize: Math.min(positiveInt(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, warnings), maxQueueSize),
      maxQueueSize,
    },
    warnings,
  };
}
