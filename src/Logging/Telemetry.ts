/**
 * Metrics (operations, failures, switches, switch latency) and, when configured, OTLP export of traces, metrics
 * and logs. Spans come from the code itself: one per tool call (Router) and one per engine attempt (Cascade),
 * each carrying traceId, stepId and attemptId.
 */
import { Effect, Layer, Metric } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"

const latencyBoundaries = Metric.exponentialBoundaries({ start: 5, factor: 2, count: 14 })

export const operations = Metric.counter("switchyard_engine_operations_total", {
  description: "Engine attempts, by engine and outcome"
})
export const failures = Metric.counter("switchyard_engine_failures_total", {
  description: "Failed engine attempts, by engine and error type"
})
export const operationDuration = Metric.histogram("switchyard_engine_operation_ms", {
  description: "Duration of one engine attempt",
  boundaries: latencyBoundaries
})
export const switches = Metric.counter("switchyard_engine_switches_total", {
  description: "Engine switches, by source, target and success"
})
export const switchLatency = Metric.histogram("switchyard_engine_switch_ms", {
  description: "Duration of the engine switch protocol",
  boundaries: latencyBoundaries
})

export const recordOperation = (
  engine: string,
  outcome: "success" | "failure",
  durationMs: number,
  errorType?: string
) =>
  Effect.all([
    Metric.update(Metric.withAttributes(operations, { engine, outcome }), 1),
    Metric.update(Metric.withAttributes(operationDuration, { engine }), durationMs),
    errorType === undefined
      ? Effect.void
      : Metric.update(Metric.withAttributes(failures, { engine, error_type: errorType }), 1)
  ]).pipe(Effect.asVoid)

export const recordSwitch = (from: string, to: string, success: boolean, durationMs: number) =>
  Effect.all([
    Metric.update(Metric.withAttributes(switches, { from, to, success: String(success) }), 1),
    Metric.update(Metric.withAttributes(switchLatency, { from, to }), durationMs)
  ]).pipe(Effect.asVoid)

export interface TelemetryOptions {
  /** The collector, e.g. `http://127.0.0.1:4318` (configured as `SWITCHYARD_OTLP_URL` or `OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly otlpUrl?: string | undefined
  readonly serviceName: string
}

/** OTLP/HTTP (JSON) export when `otlpUrl` names a collector; nothing otherwise. */
export const layer = (options: TelemetryOptions) => {
  if (!options.otlpUrl) return Layer.empty
  return Otlp.layerJson({
    baseUrl: options.otlpUrl,
    resource: { serviceName: options.serviceName },
    tracerExportInterval: "1 second",
    // Add OTLP to the loggers in place (the system log), never replace them.
    loggerMergeWithExisting: true,
    metricsExportInterval: "10 seconds"
  }).pipe(Layer.provide(FetchHttpClient.layer))
}
