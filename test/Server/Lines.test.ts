/**
 * The stdio line reader: however the input is cut into chunks, the same lines come out; a line over the cap is
 * reported (never kept whole) and the lines after it are read; bytes that are not UTF-8 are reported as such.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Lines from "../../src/Server/Lines.ts"

const readAll = (input: Buffer, cuts: ReadonlyArray<number>, max: number) => {
  const reader = Lines.reader(max)
  const out: Array<Lines.Line> = []
  let at = 0
  for (const cut of [...cuts.map((c) => Math.abs(c) % (input.length + 1))].sort((a, b) => a - b)) {
    out.push(...reader.push(input.subarray(at, Math.max(at, cut))))
    at = Math.max(at, cut)
  }
  out.push(...reader.push(input.subarray(at)), ...reader.end())
  return out
}

describe("Lines", () => {
  it.effect.prop(
    "any cut of the input gives the lines a split on newlines gives; long ones reported, blank ones skipped",
    [Schema.Array(Schema.String), Schema.Array(Schema.Int)],
    ([texts, cuts]) =>
      Effect.sync(() => {
        // As UTF-8 carries them (a lone surrogate becomes U+FFFD).
        const clean = texts.map((t) => Buffer.from(t.replaceAll("\n", " ").replaceAll("\r", " ")).toString("utf8"))
        const max = 12
        const input = Buffer.from(clean.map((t) => `${t}\n`).join(""))
        const want = clean
          .filter((t) => t !== "")
          .map((t): Lines.Line => {
            const bytes = Buffer.byteLength(t)
            return bytes > max ? { _tag: "TooLong", bytes } : { _tag: "Line", text: t }
          })
        assert.deepStrictEqual(readAll(input, cuts, max), want)
      })
  )

  it("a line over the cap in many chunks is dropped as it comes and the next line is read", () => {
    const reader = Lines.reader(100)
    const out: Array<Lines.Line> = []
    for (let i = 0; i < 50; i++) out.push(...reader.push(Buffer.alloc(1_000, 0x61)))
    out.push(...reader.push(Buffer.from('\n{"next": true}\r\n')))
    assert.deepStrictEqual(out, [
      { _tag: "TooLong", bytes: 50_000 },
      { _tag: "Line", text: '{"next": true}' }
    ])
  })

  it("bytes that are not UTF-8 are reported, the line after them read", () => {
    const reader = Lines.reader()
    assert.deepStrictEqual(reader.push(Buffer.from([0x7b, 0xff, 0x7d, 0x0a, 0x31, 0x0a])), [
      { _tag: "NotUtf8" },
      { _tag: "Line", text: "1" }
    ])
  })
})
