export { parseTraceparent, formatTraceparent } from "./trace-context.js";
export type { SpanContext } from "./trace-context.js";
export {
  SpanKind,
  Span,
  activeSpanContext,
  activeTraceparent,
  annotateActiveSpan,
  installSpanExporter,
  tracingEnabled,
  withRemoteParent,
  withSpan,
} from "./tracer.js";
export type { AttributeValue, Attributes, FinishedSpan, SpanExporter, SpanKindValue, SpanOptions } from "./tracer.js";
export { readTracingEnv } from "./otel-env.js";
export type { TracingEnv, TracingSettings } from "./otel-env.js";
export { startTracing } from "./setup.js";
export type { StartTracingOptions, TracingHandle } from "./setup.js";
