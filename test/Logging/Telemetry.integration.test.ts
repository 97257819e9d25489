/**
 * Tracing and metrics as an operator sees them: the running service exports spans over OTLP/HTTP to a collector on
 * 127.0.0.1 — one per tool call and one per engine attempt, carrying the call's ids — and counts what it does.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Metric, Option } from "effect"
import { run } from "../../src/Cascade/Cascade.ts"
import { LlmError } from "../../src/Errors/Engine.ts"
import * as Telemetry from "../../src/Logging/Telemetry.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopServices)

interface OtlpSpan {
  readonly name: string
  readonly traceId: string
  readonly parentSpanId?: string
  readonly spanId: string
  readonly attributes: ReadonlyArray<{ key: string; value: { stringValue?: string; intValue?: string } }>
}

/** A collector: records the spans posted to /v1/traces (OTLP/HTTP JSON); accepts and ignores other signals. */
const collector = Effect.acquireRelease(
  Effect.promise(async () => {
    const spans: Array<OtlpSpan> = []
    const server = createServer(async (req, res) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      if (req.url?.startsWith("/v1/traces")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []))
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
    return { server, spans, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value?.stringValue ?? value?.intValue
}

describe("telemetry", () => {
  it.live("exports a span per tool call and per engine attempt, with the call's ids, to an OTLP collector", () =>
    Effect.gen(function* () {
      const otlp = yield* collector
      const site = yield* SiteServer.start
      const service = startService({ SWITCHYARD_OTLP_URL: otlp.url })
      const answer = yield* Effect.promise(() =>
        service.call("browser.navigate", { url: site.url("/plain.html"), traceId: "trace-otlp", stepId: "s1" })
      )
      assert.isDefined(answer.result)
      const exported = yield* Effect.promise(() =>
        waitFor(() => otlp.spans.some((s) => s.name === "Cascade.attempt"), 15_000)
      )
      assert.isTrue(exported, `spans seen: ${otlp.spans.map((s) => s.name).join(", ")}`)
      const call = otlp.spans.find((s) => s.name === "Router.browser.navigate")!
      assert.strictEqual(attribute(call, "traceId"), "trace-otlp")
      assert.strictEqual(attribute(call, "stepId"), "s1")
      assert.strictEqual(attribute(call, "attemptId"), "trace-otlp/s1#1")
      const attempt = otlp.spans.find((s) => s.name === "Cascade.attempt")!
      assert.strictEqual(attribute(attempt, "attemptId"), "trace-otlp/s1#1.1")
      assert.strictEqual(attribute(attempt, "engine"), "playwright")
      assert.strictEqual(attempt.traceId, call.traceId, "the attempt belongs to the call's trace")
    })
  )

  it.effect("counts operations and failures per engine", () =>
    Effect.gen(function* () {
      const before = yield* countOf(Telemetry.operations, { engine: "magnitude", outcome: "failure" })
      let n = 0
      yield* run(
        {
          totalTimeoutMs: 10_000,
          retryBaseDelayMs: 0,
          levels: [{ engine: "magnitude", retryCount: 2, timeoutPerAttemptMs: 1_000 }]
        },
        {
          attempt: () =>
            ++n < 3
              ? Effect.fail(new LlmError({ status: 500, retryable: true, message: "model answered 500" }))
              : Effect.succeed("ok"),
          skip: () => Effect.succeed(Option.none()),
          fingerprint: Effect.succeed("")
        },
        { action: "browser.act", isAct: false }
      )
      assert.strictEqual(
        (yield* countOf(Telemetry.operations, { engine: "magnitude", outcome: "failure" })) - before,
        2
      )
    })
  )
})

const countOf = (metric: typeof Telemetry.operations, attributes: Record<string, string>) =>
  Metric.snapshot.pipe(
    Effect.map((snapshots) => {
      const found = snapshots.find(
        (s) =>
          s.id === metric.id &&
          Object.entries(attributes).every(([k, v]) => (s.attributes as Record<string, unknown> | undefined)?.[k] === v)
      )
      return found ? Number((found.state as { count: number | bigint }).count) : 0
    })
  )
