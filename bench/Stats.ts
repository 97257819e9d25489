/** Summaries of timing samples: median, p95 and spread (interquartile range and min–max), in milliseconds. */

export interface Summary {
  readonly n: number
  readonly median: number
  readonly p95: number
  readonly p25: number
  readonly p75: number
  readonly min: number
  readonly max: number
}

/** The q-quantile by linear interpolation between closest ranks. */
const quantile = (sorted: ReadonlyArray<number>, q: number) => {
  if (sorted.length === 0) return Number.NaN
  const at = (sorted.length - 1) * q
  const lo = Math.floor(at)
  const hi = Math.ceil(at)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo)
}

export const summarize = (samples: ReadonlyArray<number>, digits = 1): Summary => {
  const round = (n: number) => Math.round(n * 10 ** digits) / 10 ** digits
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    n: sorted.length,
    median: round(quantile(sorted, 0.5)),
    p95: round(quantile(sorted, 0.95)),
    p25: round(quantile(sorted, 0.25)),
    p75: round(quantile(sorted, 0.75)),
    min: round(sorted[0] ?? Number.NaN),
    max: round(sorted[sorted.length - 1] ?? Number.NaN)
  }
}

/** `median (p95 …, IQR …–…)`. */
export const show = (s: Summary, unit = "ms") => `${s.median} ${unit} (p95 ${s.p95}, IQR ${s.p25}–${s.p75}, n ${s.n})`

/** Per-pair ratios of two sample lists taken side by side (a[i] / b[i]), summarized. */
export const ratios = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
  summarize(
    a.flatMap((x, i) => (b[i] === undefined || b[i] === 0 ? [] : [x / b[i]!])),
    3
  )

/** Times a promise-returning function, in milliseconds. */
export const time = async <A>(f: () => Promise<A>): Promise<{ ms: number; value: A }> => {
  const started = performance.now()
  const value = await f()
  return { ms: performance.now() - started, value }
}
