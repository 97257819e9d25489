/** The bench's unit of work over JSON-RPC: navigate + act(Action) + extract + screenshot, each call timed. */
import type { Service } from "../test/support/Service.ts"

export const operations = ["navigate", "act", "extract", "screenshot"] as const
export type Operation = (typeof operations)[number]

export const emailAction = {
  selector: "xpath=//*[@id='email']",
  method: "fill",
  arguments: ["ada@example.com"],
  description: "Email"
}

export const steps = (url: string): ReadonlyArray<readonly [Operation, string, Record<string, unknown>]> => [
  ["navigate", "browser.navigate", { url }],
  ["act", "browser.act", { action: emailAction }],
  ["extract", "browser.extract", { instruction: "the form" }],
  ["screenshot", "browser.screenshot", {}]
]

export interface Timed {
  readonly op: Operation
  readonly ms: number
  /** `ok` or the error type. */
  readonly outcome: string
}

/** Runs the sequence on `session` (default when undefined) with one traceId; every call is answered, ok or not. */
export const run = async (service: Service, url: string, meta: { session?: string; traceId?: string } = {}) => {
  const timed: Array<Timed> = []
  for (const [op, method, params] of steps(url)) {
    const started = performance.now()
    const answer = await service.call(method, { ...params, ...meta })
    const error = answer.error as { data?: { type?: string }; message?: string } | undefined
    timed.push({
      op,
      ms: performance.now() - started,
      outcome: answer.result !== undefined ? "ok" : (error?.data?.type ?? "error")
    })
  }
  return timed
}
