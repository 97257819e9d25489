/** Seeded garbage for fuzzing the surfaces: the same lines every run, so a failure can be replayed. */
/** Garbage of every kind a broken client or an attacker sends: bytes, JSON of the wrong shape, wrong params. */
export const randomLines = (n: number, seed = 42) => {
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(random() * xs.length)]!
  const value = (depth: number): unknown =>
    depth > 2
      ? pick([null, 1, -3.5, "x", true])
      : pick([
          () => null,
          () => Math.floor(random() * 1e6) - 5e5,
          () => "s".repeat(Math.floor(random() * 20)),
          () => random() > 0.5,
          () => Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1)),
          () =>
            Object.fromEntries(Array.from({ length: Math.floor(random() * 3) }, (_, i) => [`k${i}`, value(depth + 1)]))
        ])()
  const methods = ["browser.navigate", "browser.act", "browser.extract", "browserStatus", "nope", "", "browser.observe"]
  return Array.from({ length: n }, (_, i) => {
    switch (i % 4) {
      case 0:
        return `#${Buffer.from(Array.from({ length: 1 + Math.floor(random() * 40) }, () => Math.floor(random() * 256)))
          .toString("latin1")
          .replaceAll(/[\r\n\u2028\u2029]/g, " ")}`
      case 1:
        return JSON.stringify(value(0))
      case 2:
        return JSON.stringify({ jsonrpc: "2.0", id: i, method: pick(methods), params: value(1) })
      default:
        return JSON.stringify({
          jsonrpc: pick(["2.0", "1.0", 2]),
          id: pick([i, null, {}, "x"]),
          method: pick([...methods, 7])
        })
    }
  })
}
