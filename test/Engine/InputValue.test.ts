import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { convert, type Field, isoWeek, monthFirst, readNumber } from "../../src/Engine/InputValue.ts"

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const pad = (n: number, w = 2) => String(n).padStart(w, "0")
const months = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
]
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate()

const value = (field: Field, text: string) => {
  const result = convert(field, text, 2026)
  return Result.isSuccess(result) ? result.success.value : undefined
}
const note = (field: Field, text: string) => {
  const result = convert(field, text, 2026)
  return Result.isSuccess(result) ? result.success.note : undefined
}

/** What each kind's own format looks like, with its parts in range. */
const formats: Record<Field["kind"], RegExp> = {
  date: /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/,
  time: /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/,
  month: /^\d{4}-(0[1-9]|1[0-2])$/,
  week: /^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$/,
  "datetime-local": /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/,
  number: /^-?\d+(\.\d+)?$/,
  range: /^-?\d+(\.\d+)?$/
}

describe("InputValue", () => {
  it.prop(
    "every common spelling of a date reads as that date",
    [between(1900, 2100), between(1, 12), between(1, 31)],
    ([y, m, d0]) => {
      const d = Math.min(d0, daysIn(y, m))
      const iso = `${y}-${pad(m)}-${pad(d)}`
      const date = { kind: "date" } as const
      const spellings: Array<[string, string | undefined]> = [
        [iso, undefined],
        [`${y}/${m}/${d}`, undefined],
        [`${pad(m)}/${pad(d)}/${y}`, "en-US"],
        [`${m}/${d}/${y}`, undefined],
        [`${pad(d)}/${pad(m)}/${y}`, "en-GB"],
        [`${d}-${m}-${y}`, "fr"],
        [`${pad(d)}.${pad(m)}.${y}`, "en-US"],
        [`${months[m - 1]} ${d}, ${y}`, "de"],
        [`${d} ${months[m - 1]} ${y}`, undefined],
        [`${d}-${months[m - 1]!.slice(0, 3)}-${y}`, undefined],
        [`${months[m - 1]!.slice(0, 3)}. ${d}th ${y}`, undefined]
      ]
      for (const [text, lang] of spellings) {
        assert.strictEqual(value({ ...date, ...(lang === undefined ? {} : { lang }) }, text), iso, `${text} (${lang})`)
      }
    }
  )

  it.prop(
    "day and month are read in the page's order only when both could be either",
    [between(1, 12), between(1, 12)],
    ([a, b]) => {
      const text = `${pad(a)}/${pad(b)}/1990`
      const us = value({ kind: "date", lang: "en-US" }, text)
      const gb = value({ kind: "date", lang: "en-GB" }, text)
      const none = value({ kind: "date" }, text)
      assert.strictEqual(us, `1990-${pad(a)}-${pad(b)}`)
      assert.strictEqual(gb, `1990-${pad(b)}-${pad(a)}`)
      assert.strictEqual(none, us)
      // The answer says which order was used whenever it mattered.
      if (a !== b) {
        assert.include(note({ kind: "date" }, text), "month first")
        assert.include(note({ kind: "date", lang: "en-GB" }, text), "day first")
      } else assert.isUndefined(note({ kind: "date" }, text))
    }
  )

  it("a day past 12 decides the order whatever the page's language", () => {
    assert.strictEqual(value({ kind: "date", lang: "en-US" }, "15/03/2026"), "2026-03-15")
    assert.strictEqual(value({ kind: "date", lang: "de" }, "03/15/2026"), "2026-03-15")
    assert.isUndefined(note({ kind: "date" }, "03/15/2026"))
    assert.strictEqual(value({ kind: "date" }, "7/4/90"), "1990-07-04")
    assert.include(note({ kind: "date" }, "7/4/90"), "90 read as 1990")
    assert.strictEqual(value({ kind: "date" }, "Sunday, March 15th, 2026"), "2026-03-15")
    assert.strictEqual(value({ kind: "date" }, "15 de marzo de 2026"), "2026-03-15")
    assert.strictEqual(value({ kind: "date" }, "15. März 2026"), "2026-03-15")
    assert.strictEqual(value({ kind: "date" }, "le 15 mars 2026"), "2026-03-15")
    assert.strictEqual(value({ kind: "date" }, "19900704"), "1990-07-04")
    assert.isTrue(monthFirst(undefined) && monthFirst("en") && monthFirst("en-US") && !monthFirst("en-GB"))
  })

  it("dates that are no dates are refused with the formats a date field takes", () => {
    for (const text of [
      "13/13/2020",
      "02/30/2021",
      "2021-02-29",
      "next tuesday-ish",
      "",
      "March 2026",
      "Mar 15 1 2026",
      "32.01.2020"
    ]) {
      const result = convert({ kind: "date" }, text, 2026)
      assert.isTrue(Result.isFailure(result), text)
      if (Result.isFailure(result)) assert.include(result.failure, "YYYY-MM-DD")
    }
    assert.strictEqual(value({ kind: "date" }, "2024-02-29"), "2024-02-29")
  })

  it.prop("times in 12- and 24-hour spellings read as the same time", [between(0, 23), between(0, 59)], ([h, m]) => {
    const time = { kind: "time" } as const
    const h12 = h % 12 === 0 ? 12 : h % 12
    const half = h < 12 ? "am" : "pm"
    const expected = `${pad(h)}:${pad(m)}`
    for (const text of [
      expected,
      `${h}:${pad(m)}`,
      `${h12}:${pad(m)} ${half.toUpperCase()}`,
      `${h12}:${pad(m)}${half}`,
      `${h12}.${pad(m)} ${half[0]}.m.`,
      `${h}h${pad(m)}`
    ]) {
      assert.strictEqual(value(time, text), expected, text)
    }
    if (m === 0) assert.strictEqual(value(time, `${h12} ${half}`), expected)
  })

  it("a bare hour that could be morning or evening is refused; noon and midnight are not", () => {
    assert.isUndefined(value({ kind: "time" }, "7"))
    assert.strictEqual(value({ kind: "time" }, "19"), "19:00")
    assert.strictEqual(value({ kind: "time" }, "noon"), "12:00")
    assert.strictEqual(value({ kind: "time" }, "midnight"), "00:00")
    assert.strictEqual(value({ kind: "time" }, "14:30:15"), "14:30:15")
    for (const text of ["13 pm", "0 am", "25:00", "12:60", "half past"])
      assert.isUndefined(value({ kind: "time" }, text), text)
  })

  it("months, weeks and date-times", () => {
    for (const text of ["2026-03", "03/2026", "3/2026", "March 2026", "mar 2026", "2026 March", "März 2026"]) {
      assert.strictEqual(value({ kind: "month" }, text), "2026-03", text)
    }
    for (const text of [
      "2026-W11",
      "2026-w11",
      "W11 2026",
      "week 11, 2026",
      "2026 week 11",
      "KW 11 2026",
      "March 15, 2026",
      "2026-03-09"
    ]) {
      assert.strictEqual(value({ kind: "week" }, text), "2026-W11", text)
    }
    assert.strictEqual(value({ kind: "week" }, "2021-01-03"), "2020-W53")
    assert.isUndefined(value({ kind: "week" }, "2026-W54"))
    assert.deepStrictEqual(isoWeek(2026, 1, 1), { year: 2026, week: 1 })
    const at = { kind: "datetime-local" } as const
    for (const text of [
      "2026-03-15T14:30",
      "2026-03-15 14:30",
      "03/15/2026 2:30 PM",
      "March 15, 2026 at 2:30 pm",
      "15.03.2026, 14:30",
      "Mar 15 2026 2:30pm"
    ]) {
      assert.strictEqual(value(at, text), "2026-03-15T14:30", text)
    }
    assert.isUndefined(value(at, "03/15/2026"))
  })

  it.prop(
    "numbers keep their sign and value through separators, currency and spacing",
    [between(-10_000_000, 10_000_000), between(0, 99)],
    ([n, cents]) => {
      const sign = n < 0 ? "-" : ""
      const abs = Math.abs(n)
      const grouped = abs.toLocaleString("en-US")
      const decimal = `${sign}${abs}.${pad(cents)}`
      assert.strictEqual(readNumber(`${n}`), String(n))
      assert.strictEqual(readNumber(`${sign}${grouped}.${pad(cents)}`), decimal)
      assert.strictEqual(readNumber(`${sign}${abs.toLocaleString("de-DE")},${pad(cents)}`, "de"), decimal)
      assert.strictEqual(readNumber(`${n < 0 ? "\u2212" : ""}$${grouped}`), String(n))
    }
  )

  it("numbers as people write them, and what is no number", () => {
    assert.strictEqual(value({ kind: "number" }, "-1"), "-1")
    assert.strictEqual(value({ kind: "number" }, "−1"), "-1")
    assert.strictEqual(value({ kind: "number" }, "+3.75"), "3.75")
    assert.strictEqual(value({ kind: "number" }, "1,5"), "1.5")
    assert.strictEqual(value({ kind: "number", lang: "de" }, "1.234"), "1234")
    assert.strictEqual(value({ kind: "number" }, "1.234"), "1.234")
    assert.strictEqual(value({ kind: "number" }, ".5"), "0.5")
    for (const text of ["a few", "", "-", "1,2,3", "12abc", "--1", "1.2.3"]) {
      const result = convert({ kind: "number" }, text)
      assert.isTrue(Result.isFailure(result), text)
    }
  })

  it("a range takes numbers within its bounds and on its steps", () => {
    const salary = { kind: "range", min: "0", max: "200", step: "5" } as const
    assert.strictEqual(value(salary, "95"), "95")
    const off = convert(salary, "97")
    assert.isTrue(Result.isFailure(off) && off.failure.includes("95 or 100"))
    const past = convert(salary, "500")
    assert.isTrue(Result.isFailure(past) && past.failure.includes("between 0 and 200"))
    assert.strictEqual(value({ kind: "range" }, "100"), "100")
    assert.isUndefined(value({ kind: "range" }, "101"))
    assert.strictEqual(value({ kind: "range", min: "-1", max: "1", step: "0.1" }, "-0.3"), "-0.3")
    assert.strictEqual(value({ kind: "range", step: "any" }, "33.333"), "33.333")
  })

  it.prop(
    "whatever is written, a success is in the input's own format",
    [Schema.Literals(["date", "time", "month", "week", "datetime-local", "number", "range"]), Schema.String],
    ([kind, text]) => {
      const result = convert({ kind }, text, 2026)
      if (Result.isSuccess(result)) assert.match(result.success.value, formats[kind], `${kind} ${JSON.stringify(text)}`)
    },
    { arbitrary: { runs: 500 } }
  )
})
