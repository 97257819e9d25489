/**
 * Synthetic log roots for the analyzer and importer tests: traces laid out as the attempt log lays them out, with
 * personal data written in the clear (as an older or careless producer would) so redaction on read can be checked.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { crc32, deflateSync } from "node:zlib"
import { Option } from "effect"
import type { EngineKind, EngineMode } from "../../src/EngineId.ts"
import * as Events from "../../src/Logging/Events.ts"
import * as Summary from "../../src/Logging/Summary.ts"

/** What must never reach a report. */
export const canaries = {
  email: "grace.hopper@example.com",
  card: "4111 1111 1111 1111",
  token: "tok_live_canary_0123456789",
  password: "hunter2-canary"
}

/** A solid-colour PNG of the given size, encoded by hand (no image library). */
export const png = (width: number, height: number, rgb: readonly [number, number, number]) => {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, "ascii"), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).map((_, i) => rgb[i % 3]!)])
  const pixels = Buffer.concat(Array.from({ length: height }, () => row))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0))
  ])
}

export type RawEvent = Partial<Events.Stamped> & Record<string, unknown>

export interface TraceSpec {
  readonly day: string
  readonly traceId: string
  readonly events: ReadonlyArray<RawEvent>
  /** Artifact file name → content. */
  readonly artifacts?: Record<string, Uint8Array | string>
  /** Write summary.json (default true): a trace without one must be folded from its lines. */
  readonly summary?: boolean
}

/** Writes a trace directory; returns it. */
export const writeTrace = (root: string, spec: TraceSpec) => {
  const dir = join(root, "browser-automation", spec.day, spec.traceId)
  mkdirSync(join(dir, "artifacts"), { recursive: true })
  const ts = (i: number) => `${spec.day}T10:00:${String(i).padStart(2, "0")}.000Z`
  const events = spec.events.map((e, i) => ({ ts: ts(i), traceId: spec.traceId, ...e }))
  writeFileSync(join(dir, "attempt.jsonl"), events.map((e) => `${JSON.stringify(e)}\n`).join(""))
  if (spec.summary !== false) {
    // Folded as the attempt log folds: from the lines that decode.
    const summary = events
      .flatMap((e) => Option.toArray(Events.decode(e)))
      .reduce(Summary.fold, Summary.empty(spec.traceId, ts(0)))
    writeFileSync(join(dir, "summary.json"), JSON.stringify(summary, null, 2))
  }
  for (const [name, data] of Object.entries(spec.artifacts ?? {})) writeFileSync(join(dir, "artifacts", name), data)
  return dir
}

/** An engine attempt's lifecycle: start, then success or failure. */
export const attempt = (
  call: { attemptId: string; stepId?: string; action: string; toolArgsHash?: string },
  n: number,
  engine: { provider: EngineKind; mode?: EngineMode },
  outcome: { ok: true } | { ok: false; errorType: string; reason: string }
): ReadonlyArray<RawEvent> => {
  const ref = {
    ...call,
    attemptId: `${call.attemptId}.${n}`,
    provider: engine.provider,
    engine: engine.provider,
    ...(engine.mode ? { mode: engine.mode } : {}),
    level: 0,
    attempt: 1
  }
  return [
    { event: "start", ...ref },
    outcome.ok
      ? { event: "success", ...ref, outcome: "success", durationMs: 120 }
      : {
          event: "failure",
          ...ref,
          outcome: "failure",
          durationMs: 340,
          errorType: outcome.errorType,
          reason: outcome.reason,
          retryable: true
        }
  ]
}
