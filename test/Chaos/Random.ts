/** A seeded random source (mulberry32): the chaos schedule and what the workers send replay from one number. */

export interface Random {
  /** In [0, 1). */
  readonly next: () => number
  /** An integer in [min, max]. */
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  readonly chance: (p: number) => boolean
  readonly shuffle: <A>(items: ReadonlyArray<A>) => Array<A>
  /** A generator of its own, derived from this one, so one consumer's draws do not shift another's. */
  readonly fork: () => Random
}

export const defaultSeed = 20261121

/** `CHAOS_SEED` when it is a whole number, else the fixed default. */
export const seedFromEnv = (env: Record<string, string | undefined> = process.env) => {
  const raw = env.CHAOS_SEED
  const n = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw)
  return Number.isSafeInteger(n) ? n : defaultSeed
}

export const make = (seed: number): Random => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const random: Random = {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)]!,
    chance: (p) => next() < p,
    shuffle: (items) => {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i)
        ;[out[i], out[j]] = [out[j]!, out[i]!]
      }
      return out
    },
    fork: () => make(Math.floor(next() * 4294967296))
  }
  return random
}
